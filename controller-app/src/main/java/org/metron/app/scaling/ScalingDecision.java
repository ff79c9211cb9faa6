package org.metron.app.scaling;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;

import java.util.List;
import java.util.Objects;

/** What the policy wants done to one chain: split one group, or merge two. Immutable. */
public final class ScalingDecision {
    /** Split = deflation (one more core), merge = inflation (one core less). */
    public enum Kind { SPLIT, MERGE }

    private final Kind kind;
    private final ChainId chain;
    private final List<String> groups;
    private final String reason;
    private final long onsetMs;
    private final int classId;
    private final int bit;
    private final boolean scaleOut;

    /**
     * @param groups  SPLIT: the group to split; MERGE: the group kept, then the group retired
     * @param onsetMs when the condition was first seen (the sample that started the sustain count), for
     *                reaction-time accounting
     */
    public ScalingDecision(Kind kind, ChainId chain, List<String> groups, String reason, long onsetMs) {
        this(kind, chain, groups, reason, onsetMs, -1, -1, false);
    }

    private ScalingDecision(Kind kind, ChainId chain, List<String> groups, String reason, long onsetMs, int classId,
                            int bit, boolean scaleOut) {
        this.scaleOut = scaleOut;
        this.classId = classId;
        this.bit = bit;
        this.kind = Objects.requireNonNull(kind);
        this.chain = Objects.requireNonNull(chain);
        this.groups = ImmutableList.copyOf(groups);
        if (this.groups.size() != (kind == Kind.SPLIT ? 1 : 2)) {
            throw new IllegalArgumentException(kind + " of chain " + chain + " needs " + (kind == Kind.SPLIT ? 1 : 2)
                    + " groups, got " + groups);
        }
        this.reason = Objects.requireNonNull(reason);
        this.onsetMs = onsetMs;
    }

    public static ScalingDecision split(ChainId chain, String group, String reason, long onsetMs) {
        return new ScalingDecision(Kind.SPLIT, chain, List.of(group), reason, onsetMs);
    }

    /** Divide class {@code classId} of the group by source-port bit {@code bit} (docs/scaling.md#class-split). */
    public static ScalingDecision splitClass(ChainId chain, String group, int classId, int bit, String reason,
                                             long onsetMs) {
        if (classId < 0 || bit < 0 || bit >= org.metron.app.api.ClassSlice.BITS) {
            throw new IllegalArgumentException("class " + classId + " and source-port bit " + bit + ": need a class"
                    + " id >= 0 and a bit in 0..15");
        }
        return new ScalingDecision(Kind.SPLIT, chain, List.of(group), reason, onsetMs, classId, bit, false);
    }

    public static ScalingDecision merge(ChainId chain, String keep, String retire, String reason, long onsetMs) {
        return new ScalingDecision(Kind.MERGE, chain, List.of(keep, retire), reason, onsetMs);
    }

    public Kind kind() {
        return kind;
    }

    public ChainId chain() {
        return chain;
    }

    public List<String> groups() {
        return groups;
    }

    public String reason() {
        return reason;
    }

    public long onsetMs() {
        return onsetMs;
    }

    /** Whether this split divides one class by a source-port bit rather than moving whole classes. */
    public boolean dividesClass() {
        return classId >= 0;
    }

    /** The class a {@link #dividesClass()} split divides; -1 otherwise. */
    public int classId() {
        return classId;
    }

    /** The source-port bit it divides it by; -1 otherwise. */
    public int bit() {
        return bit;
    }

    /** This split, its new half placed on another server (no core free on the chain's: docs/scaling.md#scale-out). */
    public ScalingDecision toOtherServer(String why) {
        if (kind != Kind.SPLIT) {
            throw new IllegalArgumentException("only a split scales out, not " + this);
        }
        return new ScalingDecision(kind, chain, groups, reason + "; " + why, onsetMs, classId, bit, true);
    }

    /** Whether this split's new half goes to another server than the chain's. */
    public boolean scaleOut() {
        return scaleOut;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ScalingDecision)) {
            return false;
        }
        ScalingDecision d = (ScalingDecision) o;
        return kind == d.kind && chain.equals(d.chain) && groups.equals(d.groups) && reason.equals(d.reason)
                && onsetMs == d.onsetMs && classId == d.classId && bit == d.bit && scaleOut == d.scaleOut;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, chain, groups, reason, onsetMs, classId, bit, scaleOut);
    }

    @Override
    public String toString() {
        return kind + " " + chain + " " + groups + (dividesClass() ? " class " + classId + " by source-port bit "
                + bit : "") + (scaleOut ? " to another server" : "") + " (" + reason + ")";
    }
}
