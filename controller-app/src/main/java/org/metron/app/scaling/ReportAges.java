package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The load monitor's one rule for missing samples (docs/scaling.md#monitoring): a group is measured only on fresh
 * reports of the server it runs on. Its load is unknown (not zero, not the last value seen) while that server's
 * load stream is down (its agent stopping, restarting or gone: the stream failed and no two reports came since) or
 * while its last report arrived more than {@link #STALE_INTERVALS} report intervals before the latest report of the
 * chain's server, by the controller's clock (a silent agent whose stream neither reports nor ends). Before this
 * rule a chain spread over two servers was measured at every report of its own server on the other server's last
 * two reports, however old: a silent server's last reading was counted again every 50 ms, and an idle one added up
 * to the 2 s that decide a merge back onto or off a server that cannot answer it. The agents' report timestamps are
 * not used: each is its agent's own monotonic clock, comparable only between two reports of one server.
 * <p>
 * The monitor calls it holding its own lock ({@link #lastAt} excepted).
 */
final class ReportAges {
    /**
     * Report intervals a server may stay silent before its groups are not measured: 1 s at the default 50 ms, two
     * agent-watch rounds (AgentWatch.INTERVAL_MS; a silent agent is suspected after LATE_ROUNDS of them), and half
     * the 2 s a merge waits for, so a silent server's last reading alone never makes up a merge. Not less: in the
     * e2e scale-out test at load 14 (two busy loops beside it) the other server's reports arrived up to 668 ms
     * apart while it served, and with a 500 ms window its group stopped being measured twice in 5 s (the log says
     * each time a group stops being measured, and why).
     */
    static final int STALE_INTERVALS = 20;

    private static final Logger log = LoggerFactory.getLogger(ReportAges.class);

    private final long windowMs;
    /** When each server's last report arrived (the monitor's clock); read without the monitor's lock too. */
    private final Map<DeviceId, Long> lastAtMs = new ConcurrentHashMap<>();
    /** Per server whose load stream failed and has not reported twice since: why it failed. */
    private final Map<DeviceId, String> down = new HashMap<>();
    /** Per chain, the groups logged as not measured, with the gap logged: each change of kind is logged once. */
    private final Map<ChainId, Map<String, Gap>> logged = new HashMap<>();

    ReportAges(int intervalMs) {
        this.windowMs = (long) STALE_INTERVALS * intervalMs;
    }

    /** A report of {@code server} arrived at {@code nowMs}; {@code measurable}: the second since its stream began. */
    void reported(DeviceId server, long nowMs, boolean measurable) {
        lastAtMs.put(server, nowMs);
        if (measurable) {
            down.remove(server);
        }
    }

    /** When the last report of {@code server} arrived; null before its first. */
    Long lastAt(DeviceId server) {
        return lastAtMs.get(server);
    }

    /** The load stream of {@code server} failed: its groups are not measured until it has reported twice again. */
    void failed(DeviceId server, String why) {
        down.put(server, why);
    }

    /**
     * Why a group on {@code server} cannot be measured on the report of its chain's server that arrived at
     * {@code nowMs}, if it cannot.
     *
     * @param twoReports whether the monitor holds two reports of that server since its stream (re)started
     */
    Optional<Gap> unmeasurable(DeviceId server, boolean twoReports, long nowMs) {
        if (!twoReports) {
            String why = down.get(server);
            return Optional.of(new Gap(true, "no two reports of " + server + " since its load stream "
                    + (why == null ? "started" : "failed (" + why + "): its agent is stopping, restarting or gone")));
        }
        Long at = lastAtMs.get(server);
        long age = at == null ? Long.MAX_VALUE : nowMs - at;
        if (age > windowMs) {
            return Optional.of(new Gap(false, "the last report of " + server + " arrived " + age + " ms before the "
                    + "chain's server's latest (window " + windowMs + " ms): its agent is silent"));
        }
        return Optional.empty();
    }

    /** Why a group is not measured: its server's stream is down (or not yet reporting twice), or it is silent. */
    static final class Gap {
        final boolean down;
        final String why;

        Gap(boolean down, String why) {
            this.down = down;
            this.why = why;
        }
    }

    /**
     * Logs the groups of {@code chain} that stop being measured, or are measured again, since the last call
     * (once per change, not at every report).
     */
    void logChanges(ChainId chain, Map<String, Gap> unmeasured, Set<String> measured) {
        Map<String, Gap> before = logged.computeIfAbsent(chain, k -> new HashMap<>());
        unmeasured.forEach((group, gap) -> {
            Gap was = before.put(group, gap);
            if (was == null || was.down != gap.down) {
                log.info("Chain {}: group {} not measured: {}; no split or merge counts it until its server "
                        + "reports again", chain, group, gap.why);
            }
        });
        before.keySet().removeIf(group -> {
            if (unmeasured.containsKey(group)) {
                return false;
            }
            if (measured.contains(group)) {
                log.info("Chain {}: group {} measured again on fresh reports of its server", chain, group);
            }
            return true;
        });
    }

    /** Drops what was logged of chains no longer placed (removed). */
    void retainChains(Set<ChainId> chains) {
        logged.keySet().retainAll(chains);
    }
}
