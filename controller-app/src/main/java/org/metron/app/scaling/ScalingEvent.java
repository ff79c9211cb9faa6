package org.metron.app.scaling;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;

import java.util.List;
import java.util.Objects;

/** One entry of a chain's scaling history: a decision and how it ended. Immutable. */
public final class ScalingEvent {
    /** How an operation ended. */
    public enum Outcome {
        /** Completed: the chain runs on the new group set. */
        DONE,
        /** Failed part-way and everything was put back as before. */
        ROLLED_BACK,
        /** Not started (e.g. no free core or tag) or could not be fully undone; {@link #detail} says. */
        FAILED
    }

    private final long atMs;
    private final ChainId chain;
    private final ScalingDecision.Kind kind;
    private final List<String> groups;
    private final List<Integer> coresBefore;
    private final List<Integer> coresAfter;
    private final List<Integer> moved;
    private final String reason;
    private final Outcome outcome;
    private final String detail;
    private final long reactionMs;
    private final long durationMs;
    private final String steps;
    private final String slice;

    /**
     * @param atMs       wall-clock time the operation ended
     * @param groups     split: [split group, new group]; merge: [kept group, retired group]
     * @param reactionMs from the first sample showing the condition to the end of the operation
     * @param durationMs from the first step to the last
     * @param steps      milliseconds per step ("pipeline 40, switch 12, ..."), where the time went
     */
    public ScalingEvent(long atMs, ChainId chain, ScalingDecision.Kind kind, List<String> groups,
                        List<Integer> coresBefore, List<Integer> coresAfter, List<Integer> moved, String reason,
                        Outcome outcome, String detail, long reactionMs, long durationMs, String steps) {
        this(atMs, chain, kind, groups, coresBefore, coresAfter, moved, reason, outcome, detail, reactionMs,
                durationMs, steps, "");
    }

    /**
     * @param slice what the operation did to a class's source-port slices, e.g. "class 0 divided by source-port
     *              bit 0: g0 keeps sport&amp;0x0001=0x0000, g0.1 takes sport&amp;0x0001=0x0001"; "" for whole
     *              classes
     */
    public ScalingEvent(long atMs, ChainId chain, ScalingDecision.Kind kind, List<String> groups,
                        List<Integer> coresBefore, List<Integer> coresAfter, List<Integer> moved, String reason,
                        Outcome outcome, String detail, long reactionMs, long durationMs, String steps,
                        String slice) {
        this.slice = Objects.requireNonNull(slice);
        this.atMs = atMs;
        this.chain = Objects.requireNonNull(chain);
        this.kind = Objects.requireNonNull(kind);
        this.groups = ImmutableList.copyOf(groups);
        this.coresBefore = ImmutableList.copyOf(coresBefore);
        this.coresAfter = ImmutableList.copyOf(coresAfter);
        this.moved = ImmutableList.copyOf(moved);
        this.reason = Objects.requireNonNull(reason);
        this.outcome = Objects.requireNonNull(outcome);
        this.detail = Objects.requireNonNull(detail);
        this.reactionMs = reactionMs;
        this.durationMs = durationMs;
        this.steps = Objects.requireNonNull(steps);
    }

    public long atMs() {
        return atMs;
    }

    public ChainId chain() {
        return chain;
    }

    public ScalingDecision.Kind kind() {
        return kind;
    }

    public List<String> groups() {
        return groups;
    }

    public List<Integer> coresBefore() {
        return coresBefore;
    }

    public List<Integer> coresAfter() {
        return coresAfter;
    }

    public List<Integer> moved() {
        return moved;
    }

    public String reason() {
        return reason;
    }

    public Outcome outcome() {
        return outcome;
    }

    public String detail() {
        return detail;
    }

    public long reactionMs() {
        return reactionMs;
    }

    public long durationMs() {
        return durationMs;
    }

    public String steps() {
        return steps;
    }

    /** What the operation did to a class's source-port slices; "" when it moved whole classes. */
    public String slice() {
        return slice;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ScalingEvent)) {
            return false;
        }
        ScalingEvent e = (ScalingEvent) o;
        return atMs == e.atMs && chain.equals(e.chain) && kind == e.kind && groups.equals(e.groups)
                && coresBefore.equals(e.coresBefore) && coresAfter.equals(e.coresAfter) && moved.equals(e.moved)
                && reason.equals(e.reason) && outcome == e.outcome && detail.equals(e.detail)
                && reactionMs == e.reactionMs && durationMs == e.durationMs && steps.equals(e.steps)
                && slice.equals(e.slice);
    }

    @Override
    public int hashCode() {
        return Objects.hash(atMs, chain, kind, groups, coresBefore, coresAfter, moved, reason, outcome, detail,
                reactionMs, durationMs, steps, slice);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("chain", chain).add("kind", kind).add("groups", groups)
                .add("cores", coresBefore + "->" + coresAfter).add("slice", slice).add("outcome", outcome)
                .add("detail", detail)
                .toString();
    }
}
