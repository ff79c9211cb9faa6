package org.metron.app.testing;

import org.metron.agent.v1.Stats;
import org.metron.drivers.agent.AgentException.Code;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * {@link TestAgent}'s StreamLoad: a report every interval on a daemon thread until closed, as the agent's
 * (agent/src/control/agent_service.cc; interval 0 = 100 ms, 10 ms..1 h else INVALID_ARGUMENT). A report that
 * cannot be made (the agent unreachable) is reported as an error once, as the client reports a lost stream, and
 * the reports resume when it can be made again.
 */
final class FakeLoadStream {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "test-agent-load-stream");
        t.setDaemon(true);
        return t;
    });

    private FakeLoadStream() {
    }

    static AutoCloseable start(int intervalMs, Supplier<Stats> report, Consumer<Stats> onReport,
                               Consumer<Throwable> onError) {
        if (intervalMs != 0 && (intervalMs < 10 || intervalMs > 3_600_000)) {
            TIMER.execute(() -> onError.accept(new AgentRefusals.Refused(Code.INVALID_ARGUMENT,
                    "interval_ms: " + intervalMs + " is outside 10..3600000 (0 = 100)")));
            return () -> { };
        }
        boolean[] failing = {false};
        ScheduledFuture<?> f = TIMER.scheduleAtFixedRate(() -> {
            Stats s;
            try {
                s = report.get();
            } catch (RuntimeException e) {
                if (!failing[0]) {
                    failing[0] = true;
                    onError.accept(e);
                }
                return;
            }
            failing[0] = false;
            onReport.accept(s);
        }, 0, intervalMs == 0 ? 100 : intervalMs, TimeUnit.MILLISECONDS);
        return () -> f.cancel(false);
    }
}
