package org.metron.app.impl;

import org.junit.After;
import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestLeadership;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;

import java.time.Duration;
import java.util.ArrayList;
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
 * Switch rule writes of an instance deposed mid-operation (it lost the chain's ownership, e.g. paused or cut off,
 * while its operation ran, and learnt it): once the term the operation started with is no longer this instance's,
 * none of its further writes or removals reaches a switch, its rollback included, and what the new owner wrote
 * stays. Two instances over one store and the same switches and agent (TwoPathWorld's), owning by TestLeadership.
 */
public class DeposedOwnerRulesTest {
    private static final ChainId R = ChainId.of("r");
    private final TwoPathWorld w = new TwoPathWorld();
    private final LocalStoreFactory shared = new LocalStoreFactory();
    private final TestLeadership cluster = new TestLeadership();
    private final List<ChainManager> open = new ArrayList<>();

    /**
     * The switches as instance a writes them: after its first write that {@code when} accepts has gone live,
     * {@code depose} runs (a loses the chain and the new owner acts); every write a sends afterwards is counted.
     */
    private static final class Deposing implements SwitchProgrammer {
        final SwitchProgrammer s;
        final String when;
        /** Armed by the test once the chain runs ({@link #arm}). */
        private Runnable depose;
        /** The operation's thread: a's background work (its backups' computation reads the switches) never deposes. */
        private Thread on;
        boolean deposed;
        final List<String> afterwards = new ArrayList<>();

        Deposing(SwitchProgrammer s, String when) {
            this.s = s;
            this.when = when;
        }

        /** {@code depose} runs at the trigger met next on the calling thread. */
        void arm(Runnable depose) {
            this.on = Thread.currentThread();
            this.depose = depose;
        }

        private boolean fires() {
            return depose != null && !deposed && Thread.currentThread() == on;
        }

        private CompletableFuture<Void> written(String what, CompletableFuture<Void> done) {
            if (deposed) {
                afterwards.add(what);
            } else if (fires() && what.startsWith(when)) {
                done.join();
                deposed = true;
                depose.run();
            }
            return done;
        }

        @Override
        public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
            return written("install " + device, s.install(device, rules));
        }

        @Override
        public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
            return written("remove " + device, s.remove(device, rules));
        }

        @Override
        public Collection<FlowEntry> entries(DeviceId device) {
            return s.entries(device);
        }

        /** Read when the offload device is chosen: the first one armed with {@code when} "read" deposes. */
        @Override
        public int ruleCount(DeviceId device) {
            if (fires() && when.equals("read")) {
                deposed = true;
                depose.run();
            }
            return s.ruleCount(device);
        }
    }

    private ChainManager instance(String name, SwitchProgrammer switches) {
        Duration t = Duration.ofSeconds(2);
        ChainManager m = new ChainManager(new ChainStore(shared, w.switches), w.servers, switches,
                cluster.instance(name), new PlacementEngine(w.servers, w.net, switches, new Random(1), t),
                new RulePlanner(Fixtures.APP, w.net), new Deployer(switches, t), t, Fixtures.synthesis());
        open.add(m);
        return m;
    }

    private Deposing deposing;
    private ChainManager a;
    private ChainManager b;

    /** a owns r and runs it, writing through {@link #deposing} ({@code when}: its trigger); b runs for r next. */
    private void owners(String when) {
        deposing = new Deposing(w.switches, when);
        a = instance("a", deposing);
        b = instance("b", w.switches);
        assertEquals(ChainState.ACTIVE, a.submit(TwoPathWorld.json("r")).state());
        cluster.instance("b").join(R);
    }

    /** a reroutes r around failed s2, deposed on the way: it moves nothing and writes nothing after. */
    private void rerouteDeposed() {
        w.net.down(Fixtures.S2);
        assertEquals(List.of(), a.reroute(Fixtures.D2));
        assertEquals(List.of(), deposing.afterwards);
    }

    @After
    public void close() {
        open.forEach(ChainManager::close);
    }

    /** The table entries of r's rules as its record (the new owner's) names them. */
    private Set<Object> recorded() {
        return new ChainStore(shared, w.switches).installed().get(R).orElseThrow().value().switchRules().stream()
                .map(r -> Deployer.entry(r.rule())).collect(Collectors.toSet());
    }

    /**
     * a reroutes r around a failed switch; after its first device's new rules went live it loses r, and b (the new
     * owner) deletes r as the operator asked. a's reroute writes nothing more (before: it installed the rest of its
     * path and removed the old rules, leaving a deleted chain's rules on the switches) and records nothing.
     */
    @Test
    public void aRerouteDeposedHalfWayLeavesTheNewOwnersDeleteAlone() {
        owners("install");
        deposing.arm(() -> {
            cluster.stop("a");
            assertTrue(b.remove(R).isEmpty());
        });

        rerouteDeposed();
        assertEquals(w.switches.log().toString(), 0, w.switches.total());
        assertTrue(b.chains().isEmpty());
    }

    /**
     * As above, but a is cut off without knowing it ({@link TestLeadership#isolate}: its view still gives it term 1
     * while b owns r with term 2): b's removal claimed term 2 in the store when it began (ChainTerms), so a's
     * reroute sends nothing more either. Before the store's claim, a's own view let it finish its reroute over b's
     * delete: its new path's rules were installed on a deleted chain's switches.
     */
    @Test
    public void aRerouteOfAnInstanceCutOffWithoutKnowingItLeavesTheNewOwnersDeleteAlone() {
        owners("install");
        deposing.arm(() -> {
            cluster.isolate("a");
            assertTrue(b.remove(R).isEmpty());
        });

        rerouteDeposed();
        assertEquals(w.switches.log().toString(), 0, w.switches.total());
        assertTrue(b.chains().isEmpty());
    }

    /**
     * a removes r; after its first device's removal it loses r; b, the new owner, finishes the removal and the
     * operator submits r again to b (the same table entries, the same pipeline). a's removal stops there: none of
     * its removals reaches a switch (before: it removed b's new rules on the devices it had still to do) and it
     * records nothing (before: it wrote its REMOVING record over b's ACTIVE one).
     */
    @Test
    public void aRemovalDeposedHalfWayLeavesTheNewOwnersChainRunning() {
        owners("remove");
        deposing.arm(() -> {
            cluster.stop("a");
            assertTrue(b.remove(R).isEmpty());
            assertEquals(ChainState.ACTIVE, b.submit(TwoPathWorld.json("r")).state());
        });

        MetronException e = assertThrows(MetronException.class, () -> a.remove(R));

        assertEquals(e.getMessage(), MetronException.Fault.NOT_LEADER, e.fault());
        assertEquals(List.of(), deposing.afterwards);
        assertEquals(ChainState.ACTIVE, b.chain(R).orElseThrow().state());
        assertEquals(recorded(), w.entriesHeld());
        assertEquals(1, w.agent.pipelines().size());
    }

    /**
     * a loses r after the first device of its reroute and wins it back (term 1, then b's 2, then a's 3) while b
     * rerouted r meanwhile: a's reroute, started with term 1, sends nothing more though a owns r again; b's rules
     * and record stay.
     */
    @Test
    public void anOperationStartedWithAnOlderTermWritesNothingAfterItsInstanceWonTheChainBack() {
        owners("install");
        deposing.arm(() -> {
            cluster.instance("a").release(R);
            assertEquals(List.of(R), b.reroute(Fixtures.D2));
            cluster.instance("b").release(R);
            cluster.instance("a").join(R);
        });

        rerouteDeposed();
        assertTrue(cluster.instance("a").actsFor(R));
        assertEquals(recorded(), w.entriesHeld());
    }

    /**
     * a takes the operator's PUT of r and loses r while it places the new version, before its first write (the new
     * version's NIC rules); b, the new owner, applies the recorded update. a sends no NIC rule (before: it sent the
     * new version's, which the agent refused as b's, and answered the operator that the update failed) and answers
     * with b's result.
     */
    @Test
    public void anUpdateDeposedBeforeItsNicRulesSendsNoneAndAnswersTheNewOwnersResult() {
        owners("read");
        long[] nicCalls = new long[1];
        Chain[] applied = new Chain[1];
        deposing.arm(() -> {
            cluster.stop("a");
            b.reconcile(R);
            applied[0] = b.chain(R).orElseThrow();
            nicCalls[0] = nicInstalls();
        });

        Chain up = a.update(R, TwoPathWorld.json("r").replace("tcp dst port 80", "tcp dst port 8080"));

        assertTrue(deposing.deposed);
        assertEquals(nicCalls[0], nicInstalls());
        assertEquals(ChainState.ACTIVE, applied[0].state());
        assertTrue(applied[0].json(), applied[0].json().contains("8080") && applied[0].update().isEmpty());
        assertEquals(applied[0], up);
        assertEquals(new ChainStore(shared, w.switches).installed().get(R).orElseThrow().value().nicRuleIds().size(),
                w.agent.listNicRules("").join().getRulesCount());
    }

    private long nicInstalls() {
        return w.agent.calls().stream().filter("InstallNicRules"::equals).count();
    }
}
