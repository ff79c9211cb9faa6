package org.metron.app.store;

import org.metron.app.api.RuleInfo;
import org.onosproject.net.flow.FlowRule;

import java.util.Objects;

/** One switch rule Metron installed for a chain, with why it exists. */
public final class InstalledRule {
    private final RuleInfo.Role role;
    private final FlowRule rule;

    public InstalledRule(RuleInfo.Role role, FlowRule rule) {
        this.role = Objects.requireNonNull(role);
        this.rule = Objects.requireNonNull(rule);
    }

    public RuleInfo.Role role() {
        return role;
    }

    public FlowRule rule() {
        return rule;
    }

    @Override
    public boolean equals(Object o) {
        // FlowRule.equals ignores treatments; exactEquals compares everything that was installed
        return o instanceof InstalledRule && ((InstalledRule) o).role == role
                && ((InstalledRule) o).rule.exactMatch(rule);
    }

    @Override
    public int hashCode() {
        return Objects.hash(role, rule);
    }

    @Override
    public String toString() {
        return role + " " + rule;
    }
}
