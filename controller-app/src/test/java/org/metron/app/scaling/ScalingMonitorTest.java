package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.Stats;
import org.metron.app.api.Placement;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The load monitor against a real metron-agent ({@link ScalingFixture}): resources read in the background,
 * subscriptions retried, flagged servers sampled, and the splits, class divisions and merges it decides from the
 * agent's load reports.
 */
public class ScalingMonitorTest extends ScalingFixture {
    /** The chain's server's report after {@code step} intervals ({@link LoadReports}). */
    private static Stats report(Placement p, long step, double load, Map<Integer, Long> ratePerClass,
                                Map<String, long[]> acc) {
        return LoadReports.report(p, step, load, ratePerClass, acc, Map.of());
    }

    private static Stats report(Placement p, long step, double load, Map<Integer, Long> ratePerClass,
                                Map<String, long[]> acc, Map<Integer, long[]> sportPerClass) {
        return LoadReports.report(p, step, load, ratePerClass, acc, sportPerClass);
    }

    private static void await(BooleanSupplier cond, java.util.function.Supplier<String> what)
            throws InterruptedException {
        long end = System.currentTimeMillis() + 20_000;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                throw new AssertionError("timed out waiting for " + what.get());
            }
            Thread.sleep(20);
        }
    }

    @Test
    public void resourcesReadInTheBackgroundServeOnlyWhileFresh() throws Exception {
        Rig rig = new Rig("resources");
        AtomicLong now = new AtomicLong(1_000);
        ResourceCache cache = new ResourceCache(now::get);
        MetronServer server = rig.servers.server(rig.placement().server().get()).get();
        assertTrue("nothing read yet", cache.fresh(server.id()).isEmpty());
        cache.refresh(server);
        await(() -> cache.fresh(server.id()).isPresent(), () -> "the agent's resources");
        assertEquals(agent.client().getResources().get(10, TimeUnit.SECONDS).getCoresList(),
                cache.fresh(server.id()).get().getCoresList());
        now.addAndGet(ResourceCache.MAX_AGE_MS);
        assertTrue(cache.fresh(server.id()).isPresent());
        now.incrementAndGet();
        assertTrue("too old: the split asks the agent", cache.fresh(server.id()).isEmpty());
    }

    /**
     * A registry that cannot list the servers once (in ONOS: a server device whose driver is not bound on this node
     * yet) must not stop the monitor: the next round subscribes and the chain is measured. Failed before: the
     * exception cancelled the periodic subscription for good (measured on a node of the 3-node cluster test).
     */
    @Test
    public void aFailedSubscriptionRoundIsRetriedAndTheChainIsMeasured() throws Exception {
        Rig rig = new Rig("resubscribe");
        AtomicInteger asked = new AtomicInteger();
        ServerRegistry failingOnce = new ServerRegistry() {
            @Override
            public java.util.Collection<MetronServer> servers() {
                if (asked.getAndIncrement() == 0) {
                    throw new IllegalStateException("driver not bound yet");
                }
                return rig.servers.servers();
            }

            @Override
            public Optional<MetronServer> server(DeviceId id) {
                return rig.servers.server(id);
            }
        };
        try (LoadMonitor monitor = new LoadMonitor(rig.store, failingOnce,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), System::currentTimeMillis, 100,
                new SingleInstanceLeadership())) {
            monitor.start();
            await(() -> monitor.latest(rig.chain).isPresent(), () -> "a measurement after " + asked.get()
                    + " subscription rounds");
            assertTrue(asked.get() >= 2);
        }
    }

    @Test
    public void aFlaggedServerIsSampledAtOnceButNotRightAfterAReport() throws Exception {
        Rig rig = new Rig("sample");
        AtomicLong now = new AtomicLong(1_000_000);
        DeviceId server = rig.placement().server().get();
        try (LoadMonitor monitor = new LoadMonitor(rig.store, rig.servers,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), now::get, 100,
                new SingleInstanceLeadership())) {
            monitor.sampleNow(server);
            Thread.sleep(300);
            assertTrue("no report to measure against yet", monitor.latest(rig.chain).isEmpty());
            monitor.onReport(server, agent.client().getStats("").get(10, TimeUnit.SECONDS));
            monitor.sampleNow(server);
            Thread.sleep(300);
            assertTrue("the last report is too recent", monitor.latest(rig.chain).isEmpty());
            now.addAndGet(50);
            monitor.sampleNow(server);
            await(() -> monitor.latest(rig.chain).isPresent(), () -> "a measurement from the on-demand sample");
            assertEquals(List.of("g0"), monitor.latest(rig.chain).get().groups().stream().map(GroupLoad::groupId)
                    .collect(Collectors.toList()));
        }
    }

    @Test
    public void theMonitorSplitsASaturatedGroupAndMergesTheIdleHalvesBack() throws Exception {
        Rig rig = new Rig("monitor", true);
        AtomicLong now = new AtomicLong(1_000_000);
        DeviceId server = rig.placement().server().get();
        Map<Integer, Long> rates = Map.of(0, 40L, 1, 30L, 2, 20L, 3, 10L);  // packets per 100 ms interval
        Map<String, long[]> busy = new java.util.HashMap<>();
        try (LoadMonitor monitor = new LoadMonitor(rig.store, rig.servers,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), now::get, 100,
                new SingleInstanceLeadership())) {
            long step = 1;
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy));
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy));
            assertEquals(0.2, monitor.latest(rig.chain).get().groups().get(0).load(), 1e-9);
            assertEquals(400.0, monitor.latest(rig.chain).get().groups().get(0).classRates().get(0), 1e-9);
            // the first overloaded report splits
            now.addAndGet(100);
            monitor.onReport(server, report(rig.placement(), step++, 0.97, rates, busy));
            await(() -> rig.placement().groups().size() == 2, () -> "the split: " + rig.scaling.history(rig.chain));
            await(() -> rig.scaling.history(rig.chain).size() == 1, () -> "the split's history entry");
            ScalingEvent split = rig.scaling.history(rig.chain).get(0);
            assertEquals(split.detail(), ScalingEvent.Outcome.DONE, split.outcome());
            assertEquals("balanced by the measured class rates (400+100 vs 300+200)", List.of(1, 2), split.moved());
            assertEquals(2, rig.agentGroups().size());
            // idle: no merge while the cores cool down, then after 2 s idle
            busy.clear();
            monitor.onReport(server, report(rig.placement(), step++, 0.05, rates, busy));
            for (int i = 0; i < 40 && rig.placement().groups().size() == 2; i++) {
                now.addAndGet(100);
                monitor.onReport(server, report(rig.placement(), step++, 0.05, rates, busy));
                Thread.sleep(5);
            }
            await(() -> rig.placement().groups().size() == 1, () -> "the merge: " + rig.scaling.history(rig.chain));
            await(() -> rig.scaling.history(rig.chain).size() == 2, () -> "the merge's history entry");
            ScalingEvent merge = rig.scaling.history(rig.chain).get(1);
            assertEquals(ScalingDecision.Kind.MERGE, merge.kind());
            assertEquals(merge.detail(), ScalingEvent.Outcome.DONE, merge.outcome());
            assertTrue(merge.reason(), merge.reason().contains("for 2000 ms"));
            assertEquals(1, rig.agentGroups().size());
        }
    }

    @Test
    public void theMonitorDividesAClassCarryingMostOfTheLoadByItsMeasuredBitAndJoinsItBack() throws Exception {
        Rig rig = new Rig("slices-monitor", true);
        AtomicLong now = new AtomicLong(1_000_000);
        DeviceId server = rig.placement().server().get();
        Map<Integer, Long> rates = Map.of(0, 90L, 1, 4L, 2, 3L, 3, 3L);  // class 0 carries 90 %
        // class 0's source ports: bit 0 set in half its packets, bit 1 in a ninth, the others never
        long[] bits = new long[17];
        bits[0] = 90;
        bits[1] = 45;
        bits[2] = 10;
        Map<Integer, long[]> sport = Map.of(0, bits);
        Map<String, long[]> busy = new java.util.HashMap<>();
        try (LoadMonitor monitor = new LoadMonitor(rig.store, rig.servers,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), now::get, 100,
                new SingleInstanceLeadership())) {
            long step = 1;
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy, sport));
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy, sport));
            ClassBits measured = monitor.latest(rig.chain).get().groups().get(0).classBits().get(0);
            assertEquals(0.5, measured.share(0), 1e-9);
            now.addAndGet(100);
            monitor.onReport(server, report(rig.placement(), step++, 0.97, rates, busy, sport));
            await(() -> rig.scaling.history(rig.chain).size() == 1, () -> "the split's history entry");
            ScalingEvent split = rig.scaling.history(rig.chain).get(0);
            assertEquals(split.detail(), ScalingEvent.Outcome.DONE, split.outcome());
            assertEquals(List.of(0), split.moved());
            assertTrue(split.slice(), split.slice().contains("class 0 divided by source-port bit 0"));
            assertTrue(split.reason(), split.reason().contains("50% of its packets have it set; whole classes:"
                    + " larger half 90%"));
            assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(1, 1)), rig.group("g0.1").slices());
            // idle: the two halves of class 0 join back after 2 s
            busy.clear();
            for (int i = 0; i < 40 && rig.placement().groups().size() == 2; i++) {
                now.addAndGet(100);
                monitor.onReport(server, report(rig.placement(), step++, 0.05, rates, busy, sport));
                Thread.sleep(5);
            }
            await(() -> rig.scaling.history(rig.chain).size() == 2, () -> "the merge's history entry");
            ScalingEvent merge = rig.scaling.history(rig.chain).get(1);
            assertEquals(merge.detail(), ScalingEvent.Outcome.DONE, merge.outcome());
            assertTrue(merge.slice(), merge.slice().contains("class 0 joined over source-port bit 0"));
            assertEquals(1, rig.placement().groups().size());
            assertTrue(rig.group("g0").slices().isEmpty());
        }
    }
}
