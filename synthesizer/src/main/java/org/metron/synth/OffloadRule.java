package org.metron.synth;

import java.util.Objects;

/**
 * One prioritized match-action rule for the offload device. Higher priority wins; rules of equal priority
 * never overlap, so the device may evaluate them in any order. Immutable.
 */
public final class OffloadRule {
    private final int priority;
    private final RuleMatch match;
    private final RuleAction action;

    private OffloadRule(int priority, RuleMatch match, RuleAction action) {
        this.priority = priority;
        this.match = Objects.requireNonNull(match, "match");
        this.action = Objects.requireNonNull(action, "action");
    }

    /** Creates a rule. */
    public static OffloadRule of(int priority, RuleMatch match, RuleAction action) {
        return new OffloadRule(priority, match, action);
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

    @Override
    public String toString() {
        return "prio=" + priority + " " + match + " -> " + action;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OffloadRule && ((OffloadRule) o).priority == priority
                && ((OffloadRule) o).match.equals(match) && ((OffloadRule) o).action.equals(action);
    }

    @Override
    public int hashCode() {
        return Objects.hash(priority, match, action);
    }
}
