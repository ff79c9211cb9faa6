package org.metron.app.api;

import org.onosproject.net.flow.FlowRule;

import java.util.Objects;

/**
 * A switch rule Metron installed for a chain, with the device's counters (-1 when the device has none, or when
 * the device could not be read: {@link #deviceRead()} false, {@link #deviceError()} why).
 */
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
    private final String deviceError;

    public RuleInfo(ChainId chainId, Role role, FlowRule rule, long packets, long bytes) {
        this(chainId, role, rule, packets, bytes, "");
    }

    /**
     * @param deviceError why the rule's device could not be read (its counters are then -1, unknown); empty when
     *                    it was read
     */
    public RuleInfo(ChainId chainId, Role role, FlowRule rule, long packets, long bytes, String deviceError) {
        this.chainId = Objects.requireNonNull(chainId);
        this.role = Objects.requireNonNull(role);
        this.rule = Objects.requireNonNull(rule);
        this.packets = packets;
        this.bytes = bytes;
        this.deviceError = deviceError == null ? "" : deviceError;
    }

    /** Whether the rule's device answered when its counters were read (false: counters unknown). */
    public boolean deviceRead() {
        return deviceError.isEmpty();
    }

    /** Why the device could not be read ("There is no master for available device ..."); empty when it was. */
    public String deviceError() {
        return deviceError;
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
