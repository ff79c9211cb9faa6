package org.metron.app.api;

import org.onosproject.net.flow.FlowRule;

import java.util.Objects;

/** A switch rule Metron installed for a chain, with the device's counters (-1 when the device has none). */
public final class RuleInfo {
    /** Why the rule exists. */
    public enum Role {
        /** A synthesized stateless rule on the offload device (tag, drop or forward). */
        OFFLOAD,
        /** Carries tagged traffic from the offload device toward the server. */
        TRANSIT,
        /** Carries the server's output toward the chain's egress point (replies: toward its ingress point). */
        RETURN,
        /** A synthesized stateless rule classifying reply traffic where it enters: the chain's egress point. */
        REPLY
    }

    private final ChainId chainId;
    private final Role role;
    private final FlowRule rule;
    private final long packets;
    private final long bytes;

    public RuleInfo(ChainId chainId, Role role, FlowRule rule, long packets, long bytes) {
        this.chainId = Objects.requireNonNull(chainId);
        this.role = Objects.requireNonNull(role);
        this.rule = Objects.requireNonNull(rule);
        this.packets = packets;
        this.bytes = bytes;
    }

    public ChainId chainId() {
        return chainId;
    }

    public Role role() {
        return role;
    }

    public FlowRule rule() {
        return rule;
    }

    public long packets() {
        return packets;
    }

    public long bytes() {
        return bytes;
    }
}
