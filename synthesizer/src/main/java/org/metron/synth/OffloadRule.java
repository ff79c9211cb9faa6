package org.metron.synth;

import java.util.Objects;

/**
 * One prioritized match-action rule for the offload device. Higher priority wins; rules of equal priority
 * never overlap, so the device may evaluate them in any order. A rule knows the filter entry it was compiled
 * from ({@link #sourceClass()}, {@link #sourceEntry()}), so operators can see what each entry became. Immutable.
 */
public final class OffloadRule {
    /** {@link #sourceClass()} and {@link #sourceEntry()} of a rule compiled from no entry (the catch-all). */
    public static final int NO_SOURCE = -1;

    private final int priority;
    private final RuleMatch match;
    private final RuleAction action;
    private final int sourceClass;
    private final int sourceEntry;

    private OffloadRule(int priority, RuleMatch match, RuleAction action, int sourceClass, int sourceEntry) {
        this.priority = priority;
        this.match = Objects.requireNonNull(match, "match");
        this.action = Objects.requireNonNull(action, "action");
        if ((sourceClass < 0 || sourceEntry < 0) && (sourceClass != NO_SOURCE || sourceEntry != NO_SOURCE)) {
            throw new IllegalArgumentException("rule source must be a class and an entry, or neither: class "
                    + sourceClass + " entry " + sourceEntry);
        }
        this.sourceClass = sourceClass;
        this.sourceEntry = sourceEntry;
    }

    /** Creates a rule compiled from no filter entry (e.g. the catch-all that sends the rest to software). */
    public static OffloadRule of(int priority, RuleMatch match, RuleAction action) {
        return new OffloadRule(priority, match, action, NO_SOURCE, NO_SOURCE);
    }

    /**
     * Creates a rule compiled from one filter entry.
     *
     * @param sourceClass the class the entry belongs to (not necessarily the action's class: a punt rule sends
     *                    the entry's packets to software unclassified)
     * @param sourceEntry index of the entry in that class's {@link TrafficClass#filters()}
     */
    public static OffloadRule of(int priority, RuleMatch match, RuleAction action, int sourceClass, int sourceEntry) {
        return new OffloadRule(priority, match, action, sourceClass, sourceEntry);
    }

    public int priority() {
        return priority;
    }

    public RuleMatch match() {
        return match;
    }

    public RuleAction action() {
        return action;
    }

    /** Class of the filter entry this rule was compiled from, or {@link #NO_SOURCE}. */
    public int sourceClass() {
        return sourceClass;
    }

    /** Index of that entry in its class's {@link TrafficClass#filters()}, or {@link #NO_SOURCE}. */
    public int sourceEntry() {
        return sourceEntry;
    }

    /** Whether this rule was compiled from entry {@code entry} of class {@code classId}. */
    public boolean compiledFrom(int classId, int entry) {
        return sourceClass == classId && sourceEntry == entry;
    }

    @Override
    public String toString() {
        return "prio=" + priority + " " + match + " -> " + action
                + (sourceClass == NO_SOURCE ? "" : " (class " + sourceClass + " entry " + sourceEntry + ")");
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof OffloadRule)) {
            return false;
        }
        OffloadRule r = (OffloadRule) o;
        return r.priority == priority && r.match.equals(match) && r.action.equals(action)
                && r.sourceClass == sourceClass && r.sourceEntry == sourceEntry;
    }

    @Override
    public int hashCode() {
        return Objects.hash(priority, match, action, sourceClass, sourceEntry);
    }
}
