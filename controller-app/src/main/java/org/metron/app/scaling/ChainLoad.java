package org.metron.app.scaling;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.metron.app.api.ChainId;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One chain's groups as measured in one interval, with the limits of its deployment section: what the policy
 * decides on. A group whose load is unknown this interval (its server silent, restarting or gone:
 * {@link #unmeasured()}) is not among {@link #groups()}: unknown, not zero. Immutable.
 */
public final class ChainLoad {
    private final ChainId chain;
    private final String server;
    private final boolean autoScale;
    private final int minCores;
    private final int maxCores;
    private final List<GroupLoad> groups;
    private final int freeHere;
    private final int freeElsewhere;
    private final Map<String, String> unmeasured;

    /**
     * @param server   the server running the groups (cooldowns are per core of a server)
     * @param minCores the deployment's {@code cpuCores}: merges never go below it
     * @param maxCores the deployment's {@code maxCpuCores}: splits never go above it
     */
    public ChainLoad(ChainId chain, String server, boolean autoScale, int minCores, int maxCores,
                     List<GroupLoad> groups) {
        this(chain, server, autoScale, minCores, maxCores, groups, -1, 0, Map.of());
    }

    private ChainLoad(ChainId chain, String server, boolean autoScale, int minCores, int maxCores,
                      List<GroupLoad> groups, int freeHere, int freeElsewhere, Map<String, String> unmeasured) {
        this.unmeasured = ImmutableMap.copyOf(unmeasured);
        this.freeHere = freeHere;
        this.freeElsewhere = freeElsewhere;
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

    /** Distinct cores the chain's groups run on its server (groups scaled out to others not counted). */
    public long cores() {
        return groups.stream().filter(g -> !g.remote()).mapToInt(GroupLoad::core).distinct().count();
    }

    /**
     * This measurement with what the servers have free (docs/scaling.md#scale-out).
     *
     * @param here      cores free on the chain's server; -1 = not known (taken as free: the executor checks)
     * @param elsewhere cores free on the other servers the chain could scale out to
     */
    public ChainLoad withFreeCores(int here, int elsewhere) {
        return new ChainLoad(chain, server, autoScale, minCores, maxCores, groups, here, elsewhere, unmeasured);
    }

    /**
     * This measurement with the chain's groups whose load is not known this interval, and why (group id →
     * reason); no split or merge counts them (ScalingPolicy#evaluate).
     */
    public ChainLoad withUnmeasured(Map<String, String> why) {
        return new ChainLoad(chain, server, autoScale, minCores, maxCores, groups, freeHere, freeElsewhere, why);
    }

    /** The chain's groups not measured this interval, and why: group id → reason. */
    public Map<String, String> unmeasured() {
        return unmeasured;
    }

    /** Cores free on the chain's server; -1 when not known. */
    public int freeHere() {
        return freeHere;
    }

    /** Cores free on other servers the chain could scale out to. */
    public int freeElsewhere() {
        return freeElsewhere;
    }
}
