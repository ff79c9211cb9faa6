package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything a deployed chain has installed, as recorded after the deployment succeeded: what removal (on this
 * or any other controller instance) must take away.
 */
public final class InstalledState {
    private final ChainId chainId;
    private final DeviceId server;
    private final List<InstalledRule> switchRules;
    private final List<Long> nicRuleIds;
    private final boolean pipeline;

    /**
     * @param server the server whose agent holds the pipeline and NIC rules; empty for a fully offloaded chain
     */
    public InstalledState(ChainId chainId, Optional<DeviceId> server, List<InstalledRule> switchRules,
                          List<Long> nicRuleIds, boolean pipeline) {
        this.chainId = Objects.requireNonNull(chainId);
        this.server = server.orElse(null);
        this.switchRules = ImmutableList.copyOf(switchRules);
        this.nicRuleIds = ImmutableList.copyOf(nicRuleIds);
        this.pipeline = pipeline;
    }

    public ChainId chainId() {
        return chainId;
    }

    public Optional<DeviceId> server() {
        return Optional.ofNullable(server);
    }

    public List<InstalledRule> switchRules() {
        return switchRules;
    }

    public List<Long> nicRuleIds() {
        return nicRuleIds;
    }

    /** Whether the pipeline (pipeline id = chain id) runs on the server. */
    public boolean pipeline() {
        return pipeline;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof InstalledState)) {
            return false;
        }
        InstalledState s = (InstalledState) o;
        return chainId.equals(s.chainId) && Objects.equals(server, s.server) && switchRules.equals(s.switchRules)
                && nicRuleIds.equals(s.nicRuleIds) && pipeline == s.pipeline;
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, server, switchRules, nicRuleIds, pipeline);
    }
}
