package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;

import java.util.List;
import java.util.Objects;

/**
 * A server an operator drained (docs/failover.md#planned-restart-drain): nothing is placed on it, scaled out to it
 * or failed over to it until it is undrained. The one record of that state ({@link ChainStore#drained()}), read by
 * placement, scaling and every view; it also names the chains the drain moved off, which an undrain that is asked
 * to moves back.
 */
public final class DrainedServer {
    private final long sinceMs;
    private final List<ChainId> movedOff;

    /**
     * @param sinceMs  when it was drained (ms since the epoch)
     * @param movedOff the chains whose own server it was and that the drain moved elsewhere
     */
    public DrainedServer(long sinceMs, List<ChainId> movedOff) {
        this.sinceMs = sinceMs;
        this.movedOff = ImmutableList.copyOf(movedOff);
    }

    public long sinceMs() {
        return sinceMs;
    }

    public List<ChainId> movedOff() {
        return movedOff;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DrainedServer && ((DrainedServer) o).sinceMs == sinceMs
                && ((DrainedServer) o).movedOff.equals(movedOff);
    }

    @Override
    public int hashCode() {
        return Objects.hash(sinceMs, movedOff);
    }

    @Override
    public String toString() {
        return "drained since " + java.time.Instant.ofEpochMilli(sinceMs) + (movedOff.isEmpty() ? ""
                : ", moved off: " + movedOff);
    }
}
