package org.metron.app.scaling;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;

import java.util.List;
import java.util.Objects;

/**
 * One chain's groups as measured in one interval, with the limits of its deployment section: what the policy
 * decides on. Immutable.
 */
public final class ChainLoad {
    private final ChainId chain;
    private final String server;
    private final boolean autoScale;
    private final int minCores;
    private final int maxCores;
    private final List<GroupLoad> groups;

    /**
     * @param server   the server running the groups (cooldowns are per core of a server)
     * @param minCores the deployment's {@code cpuCores}: merges never go below it
     * @param maxCores the deployment's {@code maxCpuCores}: splits never go above it
     */
    public ChainLoad(ChainId chain, String server, boolean autoScale, int minCores, int maxCores,
                     List<GroupLoad> groups) {
        this.chain = Objects.requireNonNull(chain);
        this.server = Objects.requireNonNull(server);
        if (minCores < 1 || maxCores < minCores) {
            throw new IllegalArgumentException("chain " + chain + ": need 1 <= minCores (" + minCores
                    + ") <= maxCores (" + maxCores + ")");
        }
        this.autoScale = autoScale;
        this.minCores = minCores;
        this.maxCores = maxCores;
        this.groups = ImmutableList.copyOf(groups);
    }

    public ChainId chain() {
        return chain;
    }

    public String server() {
        return server;
    }

    public boolean autoScale() {
        return autoScale;
    }

    public int minCores() {
        return minCores;
    }

    public int maxCores() {
        return maxCores;
    }

    public List<GroupLoad> groups() {
        return groups;
    }

    /** Distinct cores the chain's groups run on. */
    public long cores() {
        return groups.stream().mapToInt(GroupLoad::core).distinct().count();
    }
}
