package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.PendingPart;
import org.metron.app.store.InstalledState;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Deleted means deleted: DELETE records the intent first, removes what it can part by part, keeps exactly what is
 * left (per device, with why) and removes it when its device answers again; nothing places a deleted chain again.
 */
public class ChainRemovalTest {
    private static final Duration T = Duration.ofSeconds(2);

    private static AgentWatch watch(World w) {
        return new AgentWatch(w.servers, new ServerRecovery(w.store, w.manager, T), T);
    }

    @Test
    public void whatADeadAgentHoldsIsPendingAndGoesWhenItAnswers() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId server = w.manager.placement(id).get().server().get();
        List<Long> nicRules = w.store.installed().get(id).map(Versioned::value).get().nicRuleIds();
        w.agents.get(0).unreachable(true);

        Optional<Chain> left = w.manager.remove(id);

        assertTrue(left.isPresent());
        assertEquals(ChainState.REMOVING, left.get().state());
        assertEquals(List.of(new PendingPart(server, "pipeline web", "agent 10.0.0.1:50051: RemovePipeline: "
                + "UNAVAILABLE: connection refused"), new PendingPart(server, "NIC rules " + nicRules, "not tried: the agent "
                + "failed to remove the pipeline")), left.get().pending());
        assertEquals(left, w.manager.chain(id));
        // the store keeps exactly what is left: no switch rule (they went), the pipeline and NIC rules
        InstalledState st = w.store.installed().get(id).map(Versioned::value).get();
        assertTrue(st.switchRules().isEmpty());
        assertTrue(st.pipeline());
        assertEquals(nicRules, st.nicRuleIds());
        assertEquals(0, w.switches.total());

        // a second DELETE tries again: the same answer while the agent is dead
        assertEquals(left.get().pending(), w.manager.remove(id).get().pending());
        // rounds of the agent watch while it is dead change nothing
        watch(w).check();
        assertEquals(ChainState.REMOVING, w.manager.chain(id).get().state());

        w.agents.get(0).unreachable(false);
        watch(w).check();
        assertTrue(w.manager.chain(id).isEmpty());
        assertTrue(w.agents.get(0).pipelines().isEmpty());
        assertTrue(w.agents.get(0).nicRules().isEmpty());
        assertTrue(w.manager.placements().isEmpty());
        assertTrue(w.manager.tags().isEmpty());
        assertTrue(w.store.installed().snapshot().isEmpty());
    }

    @Test
    public void rulesOnASwitchThatDoesNotAnswerArePendingUntilItIsBack() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        int onS1 = w.switches.rules(Fixtures.D1).size();
        w.switches.refuseRemoval(Fixtures.D1, true);

        Chain left = w.manager.remove(id).orElseThrow();

        assertEquals(List.of(new PendingPart(Fixtures.D1, onS1 + " switch rules", Fixtures.S1 + " does not answer")), left.pending());
        assertTrue("the server's part went", w.agents.get(0).pipelines().isEmpty());
        assertEquals(onS1, w.switches.total());
        // a device the network view does not have is not retried; one it has is
        assertTrue(w.manager.retryRemovals(d -> false).isEmpty());
        w.switches.refuseRemoval(Fixtures.D1, false);
        watch(w).check(); // the periodic retry: the switch is in the network view
        assertTrue(w.manager.chain(id).isEmpty());
        assertEquals(0, w.switches.total());
    }

    /**
     * A switch whose flow table cannot be read at removal (ONOS: an available device with no master; the embedded
     * host: not connected): its rules are known by id only, so they stay recorded and pending, and go once it can
     * be read again.
     */
    @Test
    public void rulesOnASwitchThatCannotBeReadStayRecordedAndGoWhenItCanBe() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        int onS1 = w.switches.rules(Fixtures.D1).size();
        w.switches.unreadable(Fixtures.D1, new IllegalStateException("There is no master for available device "
                + Fixtures.S1));

        Chain left = w.manager.remove(id).orElseThrow();

        assertEquals(1, left.pending().size());
        assertEquals(new PendingPart(Fixtures.D1, onS1 + " switch rules", Fixtures.D1 + " could not be read: There "
                + "is no master for available device " + Fixtures.S1), left.pending().get(0));
        assertTrue("the server's part went", w.agents.get(0).pipelines().isEmpty());
        assertEquals(onS1, w.switches.total());
        assertEquals(onS1, w.store.installedRecord(id).get().devices().get(0).size());

        w.switches.unreadable(Fixtures.D1, null);
        watch(w).check();
        assertTrue(w.manager.chain(id).isEmpty());
        assertEquals(0, w.switches.total());
        assertTrue(w.store.installedRecords().isEmpty());
    }

    /**
     * A switch that restarted (or whose rules someone deleted) no longer holds the chain's rules: there is nothing
     * left to remove there, and the removal finishes, without a pending part for rules that do not exist.
     */
    @Test
    public void rulesASwitchForgotAreNotPending() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        w.switches.remove(Fixtures.D1, w.switches.rules(Fixtures.D1)).join(); // the switch lost its table
        int before = w.switches.log().size();

        assertTrue(w.manager.remove(id).isEmpty());

        assertEquals(0, w.switches.total());
        assertTrue("S1 was asked nothing", w.switches.log().subList(before, w.switches.log().size()).stream()
                .noneMatch(l -> l.contains(Fixtures.S1)));
    }

    @Test
    public void aChainBeingRemovedIsNeitherUpdatedNorSubmittedNorRerouted() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        w.agents.get(0).unreachable(true);
        w.manager.remove(id);
        w.agents.get(0).unreachable(false);
        for (Runnable r : List.<Runnable>of(() -> w.manager.update(id, Fixtures.chainJson("web")),
                () -> w.manager.submit(Fixtures.chainJson("web")))) {
            try {
                r.run();
                fail("a deleted chain was accepted again");
            } catch (MetronException e) {
                assertEquals(MetronException.Fault.BEING_REMOVED, e.fault());
                assertTrue(e.getMessage(), e.getMessage().contains("pipeline web"));
            }
        }
        assertTrue(w.manager.reroute(Fixtures.D2, "link test removed").isEmpty());
        assertEquals(ChainState.REMOVING, w.manager.chain(id).get().state());
        assertFalse(w.agents.get(0).pipelines().isEmpty()); // untouched until the removal is tried again
        assertTrue(w.manager.remove(id).isEmpty());
    }
}
