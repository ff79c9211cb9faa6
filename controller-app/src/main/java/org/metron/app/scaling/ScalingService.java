package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What operators (REST, CLI, GUI) see of scaling and may ask of it. Implemented by {@link ScalingManager}.
 */
public interface ScalingService {

    /** A chain's decisions and how they ended, oldest first. */
    List<ScalingEvent> history(ChainId chain);

    /** A chain's flow-state alerts: its stateful elements shed flows (most recent, oldest first). */
    List<FlowStateAlert> flowStateAlerts(ChainId chain);

    /** Every chain's flow-state alerts, oldest first. */
    List<FlowStateAlert> flowStateAlerts();

    /** A chain's black-box NFs as their agents last reported them (docs/blackbox.md). */
    List<BlackBoxStatus> blackBoxes(ChainId chain);

    /** Every chain's black-box NFs. */
    List<BlackBoxStatus> blackBoxes();

    /** Every chain's history. */
    Map<ChainId, List<ScalingEvent>> history();

    /** The latest measurement of a chain's groups (load per group and per class), empty before the first. */
    Optional<ChainLoad> load(ChainId chain);

    /** A chain's packet rate at its ingress switch port (switch port statistics), once measured. */
    Optional<Double> ingressPps(ChainId chain);

    /** Operations in progress (at most one per chain). */
    Collection<ScalingOperation> inProgress();

    /**
     * Splits a group now, balancing its classes by the latest measured rates; a group measured with one class
     * has that class divided by the source-port bit that splits its measured packets most evenly
     * (docs/scaling.md#class-split).
     *
     * @throws org.metron.app.api.MetronException UNKNOWN_CHAIN, INVALID_CHAIN (no such group, not ACTIVE),
     *                                            IMPOSSIBLE_PLACEMENT (one class, no free core/tag),
     *                                            AGENT_FAILURE or SWITCH_FAILURE (rolled back)
     */
    ScalingEvent split(ChainId chain, String group);

    /**
     * Merges {@code retire} into {@code keep} now.
     *
     * @throws org.metron.app.api.MetronException as {@link #split}
     */
    ScalingEvent merge(ChainId chain, String keep, String retire);

    /**
     * Moves a running chain make-before-break to another server, its definition unchanged (impl.ChainMoves: what a
     * server drain does to the chains on it), on the chain's owner: asked of it, as {@link #split} is, when this
     * instance does not own the chain.
     *
     * @param to  the server to move to; empty: wherever placement puts it (never a drained server)
     * @param why begins the chain's reason
     * @throws org.metron.app.api.MetronException as impl.ChainMoves#move; {@link ScalingRequests.Pending} when the
     *                                            owner has not answered within the wait
     */
    DrainReport.Move move(ChainId chain, Optional<DeviceId> to, String why);
}
