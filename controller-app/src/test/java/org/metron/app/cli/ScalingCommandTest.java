package org.metron.app.cli;

import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.rest.MetronText;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.scaling.ScalingDecision;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.scaling.ScalingStore;
import org.metron.app.testing.Console;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;

import java.util.List;

import static org.junit.Assert.assertTrue;

/** metron-scaling against the real ChainManager and ScalingManager, reading what it prints. */
public class ScalingCommandTest {
    @Rule
    public final Console console = new Console();
    private World w;
    private ScalingManager scaling;

    @Before
    public void setUp() {
        w = new World(1, Fixtures.synthesis(), 1);
        LocalStoreFactory factory = new LocalStoreFactory();
        scaling = Fixtures.scaling(w, factory);
        w.manager.submit(Fixtures.chainJson("web"));
        // a decision as the executor records it
        new ScalingStore(factory).record(new ScalingEvent(1_000, ChainId.of("web"), ScalingDecision.Kind.SPLIT,
                List.of("g0", "g0.1"), List.of(1), List.of(1, 2), List.of(2), "group g0 on core 1: load 0.91",
                ScalingEvent.Outcome.DONE, "", 140, 90, "detect 50, prepare 4, nic+pipeline 60, switch 20"));
    }

    @After
    public void tearDown() {
        scaling.close();
    }

    private String run(String chain) throws Exception {
        console.reset();
        ScalingCommand c = new ScalingCommand();
        c.setService(w.manager);
        c.setScaling(scaling);
        c.name = chain;
        c.doExecute();
        return console.text();
    }

    @Test
    public void showsGroupsTagsCoresAndHistory() throws Exception {
        String text = run("web");
        assertTrue(text, text.contains("chain=web cores=" + MetronText.list(w.manager.placement(ChainId.of("web"))
                .get().cores()) + " ingress=- inProgress=none"));
        for (GroupAssignment g : w.manager.placement(ChainId.of("web")).get().groups()) {
            assertTrue(text, text.contains("group=" + g.groupId() + " server=metron:server0 tag="
                    + MetronText.groupTag(g.tag()) + " core="
                    + g.core() + " classes=" + MetronText.list(g.classIds()) + " load=-"));
        }
        assertTrue(text, text.contains("00:00:01.000 split g0+g0.1 cores 1 -> 1, 2 moved 2 DONE reaction=140ms "
                + "duration=90ms steps=[detect 50, prepare 4, nic+pipeline 60, switch 20] group g0 on core 1"));
        assertTrue("all chains when none is named", run(null).contains("chain=web "));
    }

    @Test
    public void anUnknownChainIsNamed() throws Exception {
        String text = run("nope");
        assertTrue(text, text.contains("no chain named 'nope'"));
    }
}
