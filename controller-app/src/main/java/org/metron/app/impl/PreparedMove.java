package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.store.PreparedMoveRecord;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;

/**
 * A chain's next placement, readied on a spare server while its own server's failover deadline runs
 * ({@link PreparedMoves}): chosen and recorded in the store ({@link PreparedMoveRecord}: its cores held for every
 * instance, its tags claimed), its NIC rules and pipeline up on the spare's agent, its switch rules planned but not
 * installed. Traffic still goes where the chain is placed; the move installs the switch rules and records the
 * placement ({@link LostServer#moveOff}), or {@link FailoverPreparation#discard} takes the pipeline and the tags back
 * when the lost server returns in time.
 */
final class PreparedMove {
    private final PreparedMoveRecord record;
    private final Placement was;
    private final OffloadChoice offload;
    private final DeploymentPlan plan;
    private final Deployer.ServerStart start;
    private final ChainCompiler compiler;
    private final long tookMs;

    PreparedMove(PreparedMoveRecord record, Placement was, OffloadChoice offload, DeploymentPlan plan,
                 Deployer.ServerStart start, ChainCompiler compiler, long tookMs) {
        this.record = Objects.requireNonNull(record);
        this.was = Objects.requireNonNull(was);
        this.offload = Objects.requireNonNull(offload);
        this.plan = Objects.requireNonNull(plan);
        this.start = Objects.requireNonNull(start);
        this.compiler = Objects.requireNonNull(compiler);
        this.tookMs = tookMs;
    }

    ChainId id() {
        return record.chainId();
    }

    /** What the store holds of it (written before the spare's agent was asked for anything). */
    PreparedMoveRecord record() {
        return record;
    }

    /** The lost server the chain leaves. */
    DeviceId from() {
        return record.from();
    }

    /** The placement it was prepared against: a move is valid only while the chain still has it. */
    Placement was() {
        return was;
    }

    /** The new placement (on the spare server). */
    Placement placement() {
        return record.placement();
    }

    DeviceId to() {
        return record.to();
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
        return record.tags();
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
        return record.toString();
    }
}
