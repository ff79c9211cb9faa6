package org.metron.drivers.agent;

import java.time.Duration;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * Exponential backoff: {@code initial * 2^attempt}, capped at {@code max}. One policy for reconnecting the
 * channel, retrying idempotent reads and resubscribing the load stream, so an agent restart is noticed
 * within {@code max} in every path.
 */
public final class Backoff {

    /** 50 ms doubling to 2 s: a restarted agent is back in use within ~2 s (gRPC's own default is 1..120 s). */
    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(50), Duration.ofSeconds(2));

    private final long initialMs;
    private final long maxMs;

    public Backoff(Duration initial, Duration max) {
        checkArgument(initial.toMillis() > 0 && max.compareTo(initial) >= 0,
                      "backoff: need 0 < initial <= max, got %s and %s", initial, max);
        this.initialMs = initial.toMillis();
        this.maxMs = max.toMillis();
    }

    /** Delay before retry number {@code attempt} (0-based). */
    public long delayMs(int attempt) {
        int shift = Math.min(Math.max(attempt, 0), 30);
        return Math.min(maxMs, initialMs << shift);
    }
}
