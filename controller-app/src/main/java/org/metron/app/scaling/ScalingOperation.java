package org.metron.app.scaling;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;

import java.util.List;
import java.util.Objects;

/**
 * The journal record of one split or merge in progress, written before each step is taken so that a controller
 * restarted mid-operation knows how far it got: before {@link Step#SWITCHED} it rolls back, from there on it
 * completes (docs/scaling.md#recovery). Immutable; {@link #at} answers the record for the next step.
 */
public final class ScalingOperation {
    /** Steps in the order they are taken; each is recorded before it starts. */
    public enum Step {
        /** Unused since the journal entry is first written at PIPELINE (kept: stored ordinals). */
        PREPARED,
        /** Unused since the NIC rule is installed together with the pipeline update (kept: stored ordinals). */
        NIC_RULE,
        /**
         * The first entry of an operation, written once its tag is claimed and before its placement is: the NIC
         * rule for the new tag (split, chains with NIC rules), the union of old and new rules and the new
         * transit rules, and the agent's new group set (state cloned for a split, copied into the kept group for
         * a merge) are in flight or done. Rolled back by asking the agent and the store what they hold.
         */
        PIPELINE,
        /** Switch rules re-tagged (one batch on the offload device) and confirmed. */
        SWITCHED,
        /** State created between the clone and the re-tag merged; the retired group gone (merge). */
        SYNCED
    }

    private final ScalingDecision.Kind kind;
    private final ChainId chain;
    private final Step step;
    private final String group;
    private final String other;
    private final Tag otherTag;
    private final int otherCore;
    private final List<Integer> moved;
    private final Placement before;
    private final Placement after;
    private final InstalledState installedBefore;
    private final List<InstalledRule> retagged;
    private final List<InstalledRule> transitAdded;
    private final List<InstalledRule> transitRemoved;
    private final long nicRuleId;
    private final String reason;
    private final long onsetMs;
    private final long startMs;
    private final List<InstalledRule> superseded;
    private final String slice;

    /**
     * @param group          split: the group split; merge: the group kept
     * @param other          split: the new group; merge: the retired group
     * @param otherTag       tag of {@code other}
     * @param otherCore      core of {@code other}
     * @param moved          classes changing group
     * @param retagged       offload rules as they are after the re-tag (same FlowRule ids as before)
     * @param transitAdded   transit rules installed for the new tag (split)
     * @param transitRemoved transit rules of the retired tag removed at the end (merge)
     * @param nicRuleId      NIC rule of {@code other}; 0 when the chain uses none
     */
    public ScalingOperation(ScalingDecision.Kind kind, ChainId chain, Step step, String group, String other,
                            Tag otherTag, int otherCore, List<Integer> moved, Placement before, Placement after,
                            InstalledState installedBefore, List<InstalledRule> retagged,
                            List<InstalledRule> transitAdded, List<InstalledRule> transitRemoved, long nicRuleId,
                            String reason, long onsetMs, long startMs) {
        this(kind, chain, step, group, other, otherTag, otherCore, moved, before, after, installedBefore, retagged,
                transitAdded, transitRemoved, nicRuleId, reason, onsetMs, startMs, List.of(), "");
    }

    /**
     * An operation that also divides or joins a class by source-port bits (docs/scaling.md#class-split).
     *
     * @param superseded offload rules removed once {@code retagged} (their halves, or the rule joining two
     *                   halves) are confirmed on the switch
     * @param slice      what happened to the class, for the history; "" for whole-class operations
     */
    public ScalingOperation(ScalingDecision.Kind kind, ChainId chain, Step step, String group, String other,
                            Tag otherTag, int otherCore, List<Integer> moved, Placement before, Placement after,
                            InstalledState installedBefore, List<InstalledRule> retagged,
                            List<InstalledRule> transitAdded, List<InstalledRule> transitRemoved, long nicRuleId,
                            String reason, long onsetMs, long startMs, List<InstalledRule> superseded,
                            String slice) {
        this.superseded = ImmutableList.copyOf(superseded);
        this.slice = Objects.requireNonNull(slice);
        this.kind = Objects.requireNonNull(kind);
        this.chain = Objects.requireNonNull(chain);
        this.step = Objects.requireNonNull(step);
        this.group = Objects.requireNonNull(group);
        this.other = Objects.requireNonNull(other);
        this.otherTag = Objects.requireNonNull(otherTag);
        this.otherCore = otherCore;
        this.moved = ImmutableList.copyOf(moved);
        this.before = Objects.requireNonNull(before);
        this.after = Objects.requireNonNull(after);
        this.installedBefore = Objects.requireNonNull(installedBefore);
        this.retagged = ImmutableList.copyOf(retagged);
        this.transitAdded = ImmutableList.copyOf(transitAdded);
        this.transitRemoved = ImmutableList.copyOf(transitRemoved);
        this.nicRuleId = nicRuleId;
        this.reason = Objects.requireNonNull(reason);
        this.onsetMs = onsetMs;
        this.startMs = startMs;
    }

    /** This record at a later step. */
    public ScalingOperation at(Step next) {
        return new ScalingOperation(kind, chain, next, group, other, otherTag, otherCore, moved, before, after,
                installedBefore, retagged, transitAdded, transitRemoved, nicRuleId, reason, onsetMs, startMs,
                superseded, slice);
    }

    /** Offload rules replaced by {@link #retagged()} ones with another match (class slices); removed after them. */
    public List<InstalledRule> superseded() {
        return superseded;
    }

    /** What the operation did to a class's slices ("" when it moved whole classes only). */
    public String slice() {
        return slice;
    }

    public ScalingDecision.Kind kind() {
        return kind;
    }

    public ChainId chain() {
        return chain;
    }

    public Step step() {
        return step;
    }

    public String group() {
        return group;
    }

    public String other() {
        return other;
    }

    public Tag otherTag() {
        return otherTag;
    }

    public int otherCore() {
        return otherCore;
    }

    public List<Integer> moved() {
        return moved;
    }

    public Placement before() {
        return before;
    }

    public Placement after() {
        return after;
    }

    public InstalledState installedBefore() {
        return installedBefore;
    }

    public List<InstalledRule> retagged() {
        return retagged;
    }

    public List<InstalledRule> transitAdded() {
        return transitAdded;
    }

    public List<InstalledRule> transitRemoved() {
        return transitRemoved;
    }

    public long nicRuleId() {
        return nicRuleId;
    }

    public String reason() {
        return reason;
    }

    public long onsetMs() {
        return onsetMs;
    }

    public long startMs() {
        return startMs;
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("kind", kind).add("chain", chain).add("step", step)
                .add("group", group).add("other", other).add("tag", otherTag).add("core", otherCore)
                .add("moved", moved).toString();
    }
}
