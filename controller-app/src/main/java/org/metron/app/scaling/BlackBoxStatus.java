package org.metron.app.scaling;

import com.google.common.base.MoreObjects;
import org.metron.agent.v1.BlackBoxStats;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.Objects;

/**
 * One black-box NF of a chain as its agent last reported it (docs/blackbox.md, agent.proto {@code BlackBoxStats}):
 * where it runs (server, group, element), its state, restarts and counters. Immutable.
 */
public final class BlackBoxStatus {
    /** The agent's state of an NF that gave up restarting: its chain is not ACTIVE. */
    public static final String FAILED = "FAILED";

    private final ChainId chain;
    private final String group;
    private final DeviceId server;
    private final BlackBoxStats stats;
    private final long atMs;

    public BlackBoxStatus(ChainId chain, String group, DeviceId server, BlackBoxStats stats, long atMs) {
        this.chain = Objects.requireNonNull(chain);
        this.group = Objects.requireNonNull(group);
        this.server = Objects.requireNonNull(server);
        this.stats = Objects.requireNonNull(stats);
        this.atMs = atMs;
    }

    public ChainId chain() {
        return chain;
    }

    public String group() {
        return group;
    }

    public DeviceId server() {
        return server;
    }

    /** The agent's counters and state, as reported (cumulative counters). */
    public BlackBoxStats stats() {
        return stats;
    }

    /** When the report was received (the controller's clock, ms). */
    public long atMs() {
        return atMs;
    }

    public boolean failed() {
        return FAILED.equals(stats.getState());
    }

    /** The NF as the chain names it. */
    public String nf() {
        return stats.getNf();
    }

    /** How a pending part of its chain names it: {@code black box NF (group G, element E)}. */
    String part() {
        return BlackBoxWatch.PART + stats.getNf() + " (group " + group + ", element " + stats.getElement() + ")";
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof BlackBoxStatus)) {
            return false;
        }
        BlackBoxStatus b = (BlackBoxStatus) o;
        return chain.equals(b.chain) && group.equals(b.group) && server.equals(b.server) && stats.equals(b.stats)
                && atMs == b.atMs;
    }

    @Override
    public int hashCode() {
        return Objects.hash(chain, group, server, stats, atMs);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("chain", chain).add("group", group).add("server", server)
                .add("nf", stats.getNf()).add("state", stats.getState()).add("restarts", stats.getRestarts())
                .toString();
    }
}
