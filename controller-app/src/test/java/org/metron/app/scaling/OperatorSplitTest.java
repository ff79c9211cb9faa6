package org.metron.app.scaling;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;

import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * An operator's split ({@link ScalingManager#split}) of a group holding one class divides the class by a
 * source-port bit whether or not the load monitor has reported on the chain yet: what the group holds is the
 * placement's. Before, a split asked right after the deploy (no report yet) was refused as "a single class cannot
 * split" and the same call a second later was a class split (the fast network's moves bench, whose idle split
 * follows the deploy at once).
 */
public class OperatorSplitTest {
    private static final ChainId NAPT = ChainId.of("napt");
    private World w;
    private ScalingManager scaling;

    /** One NF, a NAPT on everything: one stateful class, in group g0. */
    private static String naptChain() {
        return "{\"name\": \"napt\", \"nfs\": [{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14) -> "
                + "CheckIPHeader -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> "
                + "ToDevice(out0);\"}], \"links\": [], \"ingress\": [\"napt.in0\"], \"egress\": [\"napt.out0\"], "
                + "\"deployment\": {\"cpuCores\": 1, \"maxCpuCores\": 4, \"ingressPoint\": \"" + Fixtures.S1
                + "/1\", \"egressPoint\": \"" + Fixtures.S1 + "/3\"}}";
    }

    @Before
    public void setUp() {
        w = new World(1, Fixtures.synthesis(), 5);
        scaling = Fixtures.scaling(w, new LocalStoreFactory());
    }

    @After
    public void tearDown() {
        scaling.close();
    }

    @Test
    public void aOneClassGroupSplitBeforeAnyLoadReportIsDividedByItsLowestFreeBit() {
        assertEquals(ChainState.ACTIVE, w.manager.submit(naptChain()).state());
        GroupAssignment g0 = group("g0");
        assertEquals(1, g0.classIds().size());
        int cls = g0.classIds().get(0);

        ScalingEvent e = scaling.split(NAPT, "g0");

        assertEquals(e.toString(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.slice(), e.slice().contains("class " + cls + " divided by source-port bit 0"));
        assertEquals(Map.of(cls, new ClassSlice(1, 0)), group("g0").slices());
        assertEquals(Map.of(cls, new ClassSlice(1, 1)), group("g0.1").slices());
        assertEquals(List.of(cls), group("g0.1").classIds());
    }

    private GroupAssignment group(String id) {
        Placement p = w.manager.placement(NAPT).orElseThrow();
        return p.group(id).orElseThrow(() -> new AssertionError("no group " + id + " in " + p.groups()));
    }
}
