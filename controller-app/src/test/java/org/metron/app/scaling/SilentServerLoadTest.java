package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.Stats;
import org.metron.app.testing.Fixtures;
import org.onosproject.net.DeviceId;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * The load monitor on a chain spread over two real agents ({@link ScaleOutFixture}: g0 on the chain's server,
 * g0.1 scaled out to the other), fed the reports each server would stream (LoadReports), both groups idle: while
 * the other server is silent or restarting its group is not measured (unknown, not zero), the chain's own group
 * still is, and no merge counts the gap: the merge back comes only after 2 s of fresh idle reports of both
 * servers. Before, the other server's last two reports were measured again at every report of the chain's
 * server however old they were (a silent server read idle for good and merged back after 2 s), and a restart's
 * gap counted as idle time (the merge back came at the first report after it).
 */
public class SilentServerLoadTest extends ScaleOutFixture {
    private static final Map<Integer, Long> RATES = Map.of(0, 40L, 1, 30L, 2, 20L, 3, 10L);
    private static final double IDLE = 0.05;

    /** One rig, monitor and fake clock (reports 100 ms apart on it), and the reports fed to the monitor. */
    private final class Feed implements AutoCloseable {
        final Rig rig;
        final ScalingPolicy policy = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
        final AtomicLong now = new AtomicLong(1_000_000);
        final LoadMonitor monitor;
        final Map<String, long[]> busy = new HashMap<>();
        long step = 1;
        /** The history's one entry before the monitor starts: the split that spread the chain. */
        final int spread;

        Feed(String name) throws Exception {
            rig = new Rig(name, first.client(), second.client(), Fixtures.S1 + "/3", true);
            rig.spreadWholeClasses();
            spread = rig.scaling.history(rig.chain).size();
            // the default 50 ms interval asked of the agents: not measured after 1 s without a report
            monitor = new LoadMonitor(rig.store, rig.servers, policy, rig.executor(), now::get,
                    LoadMonitor.INTERVAL_MS, rig.leadership);
        }

        /** One interval: the clock moves 100 ms and each of {@code servers} reports, both groups idle. */
        void interval(DeviceId... servers) {
            now.addAndGet(100);
            for (DeviceId s : servers) {
                Stats r = LoadReports.report(rig.placement(), s, step, IDLE, RATES, busy, Map.of());
                monitor.onReport(s, r);
            }
            step++;
        }

        ChainLoad latest() {
            return monitor.latest(rig.chain).get();
        }

        /** What the monitor's policy did since the spread. */
        List<ScalingEvent> decided() {
            List<ScalingEvent> h = rig.scaling.history(rig.chain);
            return h.subList(spread, h.size());
        }

        /**
         * No merge decided: none in flight (the journal holds an operation from its start, on the monitor's worker,
         * until it ends: given 300 ms to start), none done since the spread, two groups placed.
         */
        void assertNoMerge(String when) throws InterruptedException {
            Thread.sleep(300);
            assertFalse(when + ": " + rig.scaling.operations().get(rig.chain), rig.scaling.operations().get(rig.chain)
                    .isPresent());
            assertEquals(when, List.of(), decided());
            assertEquals(when, 2, rig.placement().groups().size());
        }

        @Override
        public void close() {
            monitor.close();
        }
    }

    @Test
    public void aSilentServersGroupIsNotMeasuredAndItsSilenceIsNotIdleTime() throws Exception {
        try (Feed f = new Feed("silent-away")) {
            DeviceId home = f.rig.home.id();
            DeviceId away = f.rig.away.id();
            f.interval(home, away);
            f.interval(home, away);
            // the other server goes silent (its stream neither reports nor ends); the chain's server reports idle
            // for 3 s, past the 2 s that decide a merge
            for (int i = 0; i < 30; i++) {
                f.interval(home);
            }
            ChainLoad c = f.latest();
            assertEquals("the chain's own group is still measured", List.of("g0"),
                    c.groups().stream().map(GroupLoad::groupId).collect(java.util.stream.Collectors.toList()));
            assertEquals(IDLE, c.groups().get(0).load(), 1e-9);
            String why = c.unmeasured().get("g0.1");
            assertTrue(String.valueOf(c.unmeasured()), why != null && why.contains("latest (window 1000 ms): its agent is silent"));
            assertTrue("unknown, not its last value", Double.isNaN(f.policy.ewma(f.rig.chain, "g0.1")));
            f.assertNoMerge("3 s of the other server's silence");

            // it reports again: measured at once, merged back only after 2 s of fresh idle reports of both
            for (int i = 0; i < 15; i++) {
                f.interval(home, away);
            }
            assertTrue(f.latest().unmeasured().isEmpty());
            assertEquals(IDLE, f.policy.ewma(f.rig.chain, "g0.1"), 0.05);
            f.assertNoMerge("1.5 s after it reported again");
            mergesBackWithin(f, home, away, 10);
        }
    }

    @Test
    public void aRestartingServersGroupIsNotMeasuredAndTheRestartIsNotIdleTime() throws Exception {
        try (Feed f = new Feed("restart-away")) {
            DeviceId home = f.rig.home.id();
            DeviceId away = f.rig.away.id();
            // both idle for 1.5 s, then the other server's agent stops: its load stream fails
            for (int i = 0; i < 15; i++) {
                f.interval(home, away);
            }
            f.monitor.streamFailed(away, new RuntimeException("agent control server is shutting down"));
            for (int i = 0; i < 10; i++) {
                f.interval(home);
            }
            String why = f.latest().unmeasured().get("g0.1");
            assertTrue(String.valueOf(f.latest().unmeasured()), why != null
                    && why.contains("load stream failed (agent control server is shutting down)"));
            f.assertNoMerge("1 s into the restart");
            // restarted: it streams again (its first report alone measures nothing); 1 s of fresh idle reports
            // is not 2 s, whatever the 2.5 s since both groups were first idle
            for (int i = 0; i < 11; i++) {
                f.interval(home, away);
            }
            assertTrue(f.latest().unmeasured().isEmpty());
            f.assertNoMerge("1 s after the restart");
            mergesBackWithin(f, home, away, 12);
        }
    }

    /** Both report idle for up to {@code intervals} more intervals: the merge back comes, done, "for 2000 ms". */
    private static void mergesBackWithin(Feed f, DeviceId home, DeviceId away, int intervals) throws Exception {
        // a decision takes the chain's tracks (ScalingPolicy#applied, after the merge): no more reports then
        for (int i = 0; i < intervals && f.decided().isEmpty()
                && !Double.isNaN(f.policy.ewma(f.rig.chain, "g0.1")); i++) {
            f.interval(home, away);
        }
        long end = System.currentTimeMillis() + 30_000;
        while (f.decided().isEmpty() && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        List<ScalingEvent> h = f.decided();
        assertEquals(String.valueOf(h), 1, h.size());
        assertEquals(ScalingDecision.Kind.MERGE, h.get(0).kind());
        assertEquals(h.get(0).detail(), ScalingEvent.Outcome.DONE, h.get(0).outcome());
        assertTrue(h.get(0).reason(), h.get(0).reason().contains("back to " + home + ")")
                && h.get(0).reason().contains("for 2000 ms"));
        assertFalse(f.rig.placement().groups().stream().anyMatch(g -> g.remote()));
    }
}
