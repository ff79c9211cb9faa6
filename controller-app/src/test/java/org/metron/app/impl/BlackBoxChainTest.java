package org.metron.app.impl;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.metron.agent.v1.BlackBoxStats;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.gui.MetronTables;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.metrics.ControllerMetrics;
import org.metron.app.testing.Codecs;
import org.metron.app.rest.MetronText;
import org.metron.app.scaling.BlackBoxStatus;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.onosproject.ui.table.TableModel;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Chains with a black-box NF (docs/blackbox.md) through the controller: synthesized with BlackBoxNF in the group
 * config, deployed; the agent's black-box state, restarts and counters in the chain's REST view, the CLI's line,
 * the metrics; a FAILED box makes its chain DEGRADED (not ACTIVE) and a recovered one ACTIVE again; a deploy the
 * agent refuses for a box leaves that chain FAILED with the agent's message and the others as they were.
 */
public class BlackBoxChainTest {
    private Path nf;
    private World w;
    private ScalingManager scaling;

    /** A chain FW -> ids (a black box running {@code program}) -> NAPT, entering at s1 port {@code port}. */
    static String chain(String name, String program, int port) {
        return "{\"name\": \"" + name + "\", \"nfs\": ["
                + "{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow tcp "
                + "dst port 80, allow udp, deny all) -> Unstrip(14) -> ToDevice(out0);\"},"
                + "{\"name\": \"ids\", \"blackbox\": {\"program\": \"" + program + "\", \"args\": [\"--drop-port\", "
                + "\"23\"], \"onFailure\": \"open\"}},"
                + "{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: "
                + "IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\"}],"
                + " \"links\": [{\"from\": \"fw.out0\", \"to\": \"ids.in0\"}, {\"from\": \"ids.out0\", \"to\": "
                + "\"napt.in0\"}], \"ingress\": [\"fw.in0\"], \"egress\": [\"napt.out0\"], \"deployment\": "
                + "{\"ingressPoint\": \"" + Fixtures.S1 + "/" + port + "\", \"egressPoint\": \"" + Fixtures.S1 + "/3\"}}";
    }

    @Before
    public void setUp() throws Exception {
        // a program built on the NF library, as far as the fake agent can tell (it holds the ready-pipe variable)
        nf = Files.createTempFile("metron-nf-fwd", "");
        Files.writeString(nf, "#!/bin/sh\n# METRON_NF_READY_FD\nexec sleep 60\n");
        Files.setPosixFilePermissions(nf, PosixFilePermissions.fromString("rwxr-xr-x"));
        w = new World(1, Synthesis.SYNTHESIZER, 3);
        scaling = Fixtures.scaling(w, new LocalStoreFactory());
        scaling.start();
    }

    @After
    public void tearDown() throws Exception {
        scaling.close();
        Files.deleteIfExists(nf);
    }

    private TestAgent agent() {
        return w.agents.get(0);
    }

    private ChainState state(String name) {
        return w.manager.chain(ChainId.of(name)).map(Chain::state).orElseThrow();
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 200 && !done.getAsBoolean(); i++) {
            Thread.sleep(25);
        }
        assertTrue(what, done.getAsBoolean());
    }

    @Test
    public void aBlackBoxChainRunsAndShowsItsBoxAndAFailedBoxDegradesIt() throws Exception {
        assertEquals(ChainState.ACTIVE, w.manager.submit(chain("web", nf.toString(), 1)).state());
        String click = agent().pipelines().get("web").getGroupsList().stream().map(g -> g.getClickConfig())
                .filter(c -> c.contains("BlackBoxNF(")).findFirst().orElseThrow();
        assertTrue(click, click.contains("BlackBoxNF(NAME ids, PROGRAM " + nf + ", ARGS \"--drop-port 23\", MODE RING, "
                + "ON_FAILURE OPEN"));
        ChainId web = ChainId.of("web");
        await("the box reported", () -> !scaling.blackBoxes(web).isEmpty());
        BlackBoxStatus running = scaling.blackBoxes(web).get(0);
        assertEquals("RUNNING", running.stats().getState());
        assertEquals("ids", running.nf());

        // the NF died twice, was restarted, then the agent gave up: the chain is not ACTIVE
        BlackBoxStats failed = running.stats().toBuilder().setState("FAILED").setRestarts(10).setSent(500)
                .setReturned(420).setNfDropped(30).setBypassed(50).setNfSleeps(7).setNfWakeups(5).setLastExit("signal 9")
                .build();
        agent().blackBox("web", failed);
        await("DEGRADED", () -> state("web") == ChainState.DEGRADED);
        Chain c = w.manager.chain(web).get();
        assertEquals(1, c.pending().size());
        assertTrue(c.pending().toString(), c.pending().get(0).what().startsWith("black box ids (group "));
        assertEquals("FAILED after 10 restarts, last signal 9", c.pending().get(0).why());

        // the chain's REST view, the CLI line and the metrics show it
        await("reported FAILED", () -> scaling.blackBoxes(web).get(0).failed());
        BlackBoxStatus b = scaling.blackBoxes(web).get(0);
        assertEquals("{\"nf\":\"ids\",\"group\":\"" + b.group() + "\",\"server\":\"" + b.server() + "\",\"element\":\""
                + b.stats().getElement() + "\",\"mode\":\"RING\",\"state\":\"FAILED\",\"onFailure\":\"OPEN\",\"pid\":0,"
                + "\"restarts\":10,\"sent\":500,\"returned\":420,\"nfDropped\":30,\"ringFull\":0,\"bypassed\":50,"
                + "\"failedClosed\":0,\"nfLost\":0,\"nfSleeps\":7,\"nfWakeups\":5,\"link\":\"\",\"lastExit\":\"signal 9\"}",
                Codecs.json(b, BlackBoxStatus.class).toString());
        assertTrue(MetronText.blackBox(b), MetronText.blackBox(b).contains("state=FAILED onFailure=OPEN pid=0 restarts=10 sent=500 "
                + "returned=420 nfDropped=30 ringFull=0 bypassed=50 failedClosed=0 nfLost=0 nfSleeps=7 nfWakeups=5 "
                + "lastExit=signal_9"));
        String metrics = ControllerMetrics.scrape(w.manager, scaling);
        assertTrue(metrics, metrics.contains("metron_blackbox_up{chain=\"web\",group=\"" + b.group() + "\",server=\""
                + b.server() + "\",nf=\"ids\",mode=\"RING\",state=\"FAILED\"} 0"));
        assertTrue(metrics, metrics.contains("metron_blackbox_restarts_total{chain=\"web\""));
        assertTrue(metrics, metrics.contains("what=\"bypassed\"} 50"));
        String labels = "{chain=\"web\",group=\"" + b.group() + "\",server=\"" + b.server()
                + "\",nf=\"ids\",mode=\"RING\"}";
        assertTrue(metrics, metrics.contains("metron_blackbox_sleeps_total" + labels + " 7"));
        assertTrue(metrics, metrics.contains("metron_blackbox_wakeups_total" + labels + " 5"));
        assertTrue(metrics, metrics.contains("metron_chain_state{chain=\"web\",state=\"DEGRADED\"} 1"));
        // the GUI's (and the embedded dashboard's) table row
        TableModel gui = MetronTables.ALL.stream()
                .filter(v -> v.id().equals("BlackBox")).findFirst().orElseThrow().rows(w.manager, scaling);
        assertEquals(1, gui.rowCount());
        assertEquals("50 / 0 / 0", gui.getRows()[0].get("failure"));
        assertEquals("7 / 5", gui.getRows()[0].get("idle"));

        // restarted by hand (e.g. the program fixed): RUNNING again, the chain ACTIVE again
        agent().blackBox("web", failed.toBuilder().setState("RUNNING").build());
        await("ACTIVE again", () -> state("web") == ChainState.ACTIVE);
        assertTrue(w.manager.chain(web).get().pending().isEmpty());
    }

    /**
     * flowState pinned: the NF's per-flow state is inside its process, so a split of its group (which would move
     * classes, with their live flows, to a new instance) is refused naming the NF, before any other check.
     */
    @Test
    public void aGroupWithAPinnedBlackBoxIsNotSplit() throws Exception {
        String pinned = chain("pinned", nf.toString(), 1).replace("\"onFailure\": \"open\"",
                "\"onFailure\": \"open\", \"flowState\": \"pinned\"");
        assertEquals(ChainState.ACTIVE, w.manager.submit(pinned).state());
        String group = boxGroup("pinned");
        MetronException e = assertThrows(MetronException.class, () -> scaling.split(ChainId.of("pinned"), group));
        assertEquals("group " + group + " of chain pinned cannot split: it runs black-box NF ids with flowState "
                + "pinned, whose per-flow state stays inside its process: moving classes would take their existing "
                + "flows to another instance without that state", e.getMessage());
        assertEquals(1, agent().pipelines().get("pinned").getGroupsCount() - groupsWithoutBox("pinned"));

        assertEquals(ChainState.ACTIVE, w.manager.submit(chain("free", nf.toString(), 2)).state());
        // the same group without the declaration is refused only for what any group would be: its one class is
        // divided by a source-port bit (the class split), and no core is left for the new half
        String freeGroup = boxGroup("free");
        MetronException other = assertThrows(MetronException.class, () -> scaling.split(ChainId.of("free"),
                freeGroup));
        assertTrue(other.getMessage(), other.getMessage().startsWith("no free core on "));
    }

    private String boxGroup(String chain) {
        return agent().pipelines().get(chain).getGroupsList().stream().filter(g -> g.getClickConfig()
                .contains("BlackBoxNF(")).findFirst().orElseThrow().getGroupId();
    }

    private int groupsWithoutBox(String chain) {
        return (int) agent().pipelines().get(chain).getGroupsList().stream().filter(g -> !g.getClickConfig()
                .contains("BlackBoxNF(")).count();
    }

    @Test
    public void aDeployTheAgentRefusesForItsBlackBoxLeavesThatChainFailedAndTheOthersAlone() throws Exception {
        assertEquals(ChainState.ACTIVE, w.manager.submit(chain("web", nf.toString(), 1)).state());
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(chain("bad",
                "/nonexistent/metron-nf", 2)));
        assertTrue(e.getMessage(), e.getMessage().contains("black-box NF 'ids' (/nonexistent/metron-nf): not found"));
        assertEquals(ChainState.FAILED, state("bad"));
        assertTrue(w.manager.chain(ChainId.of("bad")).get().reason(), w.manager.chain(ChainId.of("bad")).get()
                .reason().contains("black-box NF 'ids' (/nonexistent/metron-nf): not found"));
        assertEquals(ChainState.ACTIVE, state("web"));
        assertEquals(List.of("web"), List.copyOf(agent().pipelines().keySet()));
    }
}
