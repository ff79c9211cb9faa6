package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.testing.Fixtures;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * An owner that stops after committing switch rules and before recording them: the next owner finds them in the
 * chain's record (the intent is written before the commit: reroute, bring-up, make-before-break update) and removes
 * them with the chain, or finishes the bring-up. Without the intent they stayed on the switches for good, steering
 * traffic nobody accounts for.
 */
public class StoppedOwnerRulesTest {
    private static final DeviceId S3 = DeviceId.deviceId(TwoPathWorld.S3);

    /** The owner's JVM stopping (not an exception any code path handles). */
    private static final class Stopped extends Error {
        private static final long serialVersionUID = 1L;
    }

    /** Switches through which the owner stops right after its rules on {@code at} (null: any device) went live. */
    private static SwitchProgrammer stoppingAfter(SwitchProgrammer s, DeviceId at) {
        return new SwitchProgrammer() {
            @Override
            public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
                CompletableFuture<Void> done = s.install(device, rules);
                if (at == null || device.equals(at)) {
                    done.join();
                    throw new Stopped();
                }
                return done;
            }

            @Override
            public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
                return s.remove(device, rules);
            }

            @Override
            public Collection<FlowEntry> entries(DeviceId device) {
                return s.entries(device);
            }

            @Override
            public int ruleCount(DeviceId device) {
                return s.ruleCount(device);
            }
        };
    }

    /** An owner over {@code w}'s store and agent, writing through {@code switches}, with term {@code term}. */
    private static ChainManager owner(TwoPathWorld w, SwitchProgrammer switches, long term) {
        Duration t = Duration.ofSeconds(2);
        return new ChainManager(w.store, w.servers, switches, new SingleInstanceLeadership(term),
                new PlacementEngine(w.servers, w.net, switches, new Random(1), t),
                new RulePlanner(Fixtures.APP, w.net), new Deployer(switches, t), t, Fixtures.synthesis());
    }

    /** Nothing of any chain is left: no switch rule, pipeline or NIC rule. */
    private static void nothingLeft(TwoPathWorld w) {
        assertEquals(w.switches.log().toString(), 0, w.switches.total());
        assertTrue(w.agent.pipelines().isEmpty());
        assertEquals(0, w.agent.listNicRules("").join().getRulesCount());
    }

    /** A world whose chain r's first owner (term 1) stopped in its bring-up, right after its first device's rules. */
    private static TwoPathWorld stoppedBringUp() {
        TwoPathWorld w = new TwoPathWorld();
        ChainManager owner = owner(w, stoppingAfter(w.switches, null), 1);
        assertThrows(Stopped.class, () -> owner.submit(TwoPathWorld.json("r")));
        return w;
    }

    /**
     * The owner stops during a chain's first deployment, its rules on one device live: the next owner (the world's
     * manager, a later term) removes the chain and nothing of it stays (before: the committed rules stayed).
     */
    @Test
    public void rulesABringUpCommittedBeforeItsOwnerStoppedGoWithTheChain() {
        TwoPathWorld w = stoppedBringUp();
        assertTrue(w.switches.total() > 0);
        assertEquals(1, w.agent.pipelines().size());

        assertTrue(w.manager.remove(ChainId.of("r")).isEmpty());
        nothingLeft(w);
    }

    /**
     * The same stop; the next owner picks the chain up as it does when it gains it: the chain is brought up again
     * and the switches hold exactly the rules its record names.
     */
    @Test
    public void aBringUpWhoseOwnerStoppedAfterCommittingIsFinishedByTheNextOwner() {
        TwoPathWorld w = stoppedBringUp();
        ChainId id = ChainId.of("r");

        w.manager.reconcile(id);

        assertEquals(ChainState.ACTIVE, w.manager.chain(id).orElseThrow().state());
        assertEquals(Deployer.entries(w.store.installed().get(id).orElseThrow().value().switchRules()),
                w.entriesHeld());
        assertEquals(1, w.agent.pipelines().size());
        w.manager.remove(id);
        nothingLeft(w);
    }

    /**
     * The owner stops during a make-before-break update, the new version's rules on one device live (its groups and
     * NIC rules started beside the old ones): the next owner removes the chain and nothing of either version stays
     * (before: the new version's switch and NIC rules stayed).
     */
    @Test
    public void rulesAnUpdateCommittedBeforeItsOwnerStoppedGoWithTheChain() {
        TwoPathWorld w = new TwoPathWorld();
        ChainId id = ChainId.of("r");
        long now = System.currentTimeMillis();
        assertEquals(ChainState.ACTIVE, w.manager.submit(TwoPathWorld.json("r")).state());
        ChainManager owner = owner(w, stoppingAfter(w.switches, null), now + 1_000);

        assertThrows(Stopped.class, () -> owner.update(id,
                TwoPathWorld.json("r").replace("tcp dst port 80", "tcp dst port 8080")));
        Set<Long> both = new java.util.HashSet<>(w.agent.listNicRules("").join().getRulesList().stream()
                .map(r -> r.getId()).collect(Collectors.toList()));
        assertTrue(both.toString(), both.size() > 1);

        ChainManager next = owner(w, w.switches, now + 2_000);
        assertTrue(next.remove(id).isEmpty());
        nothingLeft(w);
    }

    @Test
    public void rulesARerouteCommittedBeforeItsOwnerStoppedGoWithTheChain() {
        TwoPathWorld w = new TwoPathWorld();
        ChainId id = ChainId.of("r");
        long now = System.currentTimeMillis();
        w.manager.submit(TwoPathWorld.json("r"));
        assertEquals(Fixtures.D2, w.manager.placement(id).get().offloadDevice().get());
        ChainManager owner = owner(w, stoppingAfter(w.switches, S3), now + 1_000);

        w.net.down(Fixtures.S2);
        assertThrows(Stopped.class, () -> owner.reroute(Fixtures.D2)); // s3's rules are in, nothing recorded after
        assertEquals(4, w.switches.rules(S3).size());

        // the next owner (its term newer, as a next owner's is) removes the chain: nothing of it stays
        assertTrue(owner(w, w.switches, now + 2_000).remove(id).isEmpty());
        assertEquals(w.switches.log().toString(), 0, w.switches.total());
    }
}
