package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;

/**
 * A chain's next placement, readied on a spare server while its own server's failover deadline runs
 * ({@link PreparedMoves}): chosen and reserved (cores held by this instance, tags claimed in the store), its NIC rules
 * and pipeline up on the spare's agent, its switch rules planned but not installed. Traffic still goes where the
 * chain is placed; the move installs the switch rules and records the placement ({@link LostServer#moveOff}), or
 * {@link PreparedMoves#discard} takes the pipeline and the tags back when the lost server returns in time.
 */
final class PreparedMove {
    private final ChainId id;
    private final DeviceId from;
    private final Placement was;
    private final Placement placement;
    private final OffloadChoice offload;
    private final DeploymentPlan plan;
    private final Deployer.ServerStart start;
    private final List<Tag> claimed;
    private final ChainCompiler compiler;
    private final long tookMs;

    PreparedMove(ChainId id, DeviceId from, Placement was, Placement placement, OffloadChoice offload,
                 DeploymentPlan plan, Deployer.ServerStart start, List<Tag> claimed, ChainCompiler compiler,
                 long tookMs) {
        this.id = Objects.requireNonNull(id);
        this.from = Objects.requireNonNull(from);
        this.was = Objects.requireNonNull(was);
        this.placement = Objects.requireNonNull(placement);
        this.offload = Objects.requireNonNull(offload);
        this.plan = Objects.requireNonNull(plan);
        this.start = Objects.requireNonNull(start);
        this.claimed = List.copyOf(claimed);
        this.compiler = Objects.requireNonNull(compiler);
        this.tookMs = tookMs;
    }

    ChainId id() {
        return id;
    }

    /** The lost server the chain leaves. */
    DeviceId from() {
        return from;
    }

    /** The placement it was prepared against: a move is valid only while the chain still has it. */
    Placement was() {
        return was;
    }

    /** The new placement (on the spare server). */
    Placement placement() {
        return placement;
    }

    DeviceId to() {
        return placement.server().orElseThrow();
    }

    OffloadChoice offload() {
        return offload;
    }

    DeploymentPlan plan() {
        return plan;
    }

    /** The agent's part, done on the spare: {@link Deployer#deploy} finishes the move with it. */
    Deployer.ServerStart start() {
        return start;
    }

    /** The tags claimed for the new placement. */
    List<Tag> claimed() {
        return claimed;
    }

    ChainCompiler compiler() {
        return compiler;
    }

    /** How long preparing it took (ms). */
    long tookMs() {
        return tookMs;
    }

    @Override
    public String toString() {
        return "move of " + id + " from " + from + " to " + to();
    }
}
