package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.NicRule;
import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything one chain's deployment installs, computed before anything is touched: switch rules per device
 * (map order = install order: server side first, the offload device last, so no packet is tagged before the
 * path to its core exists), NIC rules and the pipeline.
 */
public final class DeploymentPlan {
    private final ChainId chainId;
    private final MetronServer server;
    private final Map<DeviceId, List<InstalledRule>> switchRules;
    private final List<NicRule> nicRules;
    private final DeployPipelineRequest pipeline;

    DeploymentPlan(ChainId chainId, Optional<MetronServer> server, Map<DeviceId, List<InstalledRule>> switchRules,
                   List<NicRule> nicRules, DeployPipelineRequest pipeline) {
        this.chainId = chainId;
        this.server = server.orElse(null);
        this.switchRules = ImmutableMap.copyOf(switchRules);
        this.nicRules = ImmutableList.copyOf(nicRules);
        this.pipeline = pipeline;
    }

    public ChainId chainId() {
        return chainId;
    }

    /** The server running the pipeline; empty for a fully offloaded chain. */
    public Optional<MetronServer> server() {
        return Optional.ofNullable(server);
    }

    public Map<DeviceId, List<InstalledRule>> switchRules() {
        return switchRules;
    }

    public List<NicRule> nicRules() {
        return nicRules;
    }

    /** The pipeline request; null without a server. */
    public DeployPipelineRequest pipeline() {
        return pipeline;
    }

    /** How many switch rules the plan installs. */
    public int ruleCount() {
        return switchRules.values().stream().mapToInt(List::size).sum();
    }

    /** All switch rules, install order. */
    public List<InstalledRule> allSwitchRules() {
        return switchRules.values().stream().flatMap(List::stream).collect(ImmutableList.toImmutableList());
    }
}
