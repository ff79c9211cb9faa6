package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;

import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * One chain's scaling as operators see it (REST /scaling, the CLI's metron-scaling --json), read at once from the
 * chain's placement and scaling: groups and cores, latest load, ingress rate, operations in progress, history and
 * flow-state alerts.
 */
public final class ChainScaling {
    private final ChainId chain;
    private final Optional<Placement> placement;
    private final Optional<ChainLoad> load;
    private final Optional<Double> ingressPps;
    private final List<ScalingOperation> inProgress;
    private final List<ScalingEvent> history;
    private final List<FlowStateAlert> flowStateAlerts;

    private ChainScaling(ChainId chain, MetronService metron, ScalingService scaling) {
        this.chain = chain;
        placement = metron.placement(chain);
        load = scaling.load(chain);
        ingressPps = scaling.ingressPps(chain);
        inProgress = scaling.inProgress().stream().filter(op -> op.chain().equals(chain))
                .collect(Collectors.toList());
        history = scaling.history(chain);
        flowStateAlerts = scaling.flowStateAlerts(chain);
    }

    /** The chain's scaling now. */
    public static ChainScaling of(ChainId chain, MetronService metron, ScalingService scaling) {
        return new ChainScaling(chain, metron, scaling);
    }

    public ChainId chain() {
        return chain;
    }

    /** Absent when the chain is not placed. */
    public Optional<Placement> placement() {
        return placement;
    }

    public Optional<ChainLoad> load() {
        return load;
    }

    /** The chain's ingress rate from the switch's port statistics, when read. */
    public Optional<Double> ingressPps() {
        return ingressPps;
    }

    public List<ScalingOperation> inProgress() {
        return inProgress;
    }

    public List<ScalingEvent> history() {
        return history;
    }

    public List<FlowStateAlert> flowStateAlerts() {
        return flowStateAlerts;
    }
}
