package org.metron.synth;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What an offload device can do: which fields it matches and writes, whether ranges must be split into
 * value/mask pairs, whether it can forward to egress itself, and how many rules it holds. Immutable.
 */
public final class TargetProfile {
    /**
     * An OpenFlow 1.3 switch as driven by ONOS (OVS here): matches L2-L4 incl. masked L4 ports (an OVS
     * extension ONOS exposes as masked port criteria) and DSCP; no TTL, fragment or TCP-flag matching;
     * writes MACs, VLAN, IPs, ports, and decrements TTL. Parses as OVS does in OpenFlow's default fragment
     * mode ("normal", which ONOS leaves as it is): the ports and ICMP type of every fragment, first ones
     * included, read as 0; rules match untagged frames only (a VLAN-tagged frame has no IP header at byte 14
     * for the chain's CheckIPHeader, but OVS would match the tagged packet's fields).
     */
    public static final TargetProfile OPENFLOW13 = new TargetProfile("OPENFLOW13",
            EnumSet.of(MatchField.ETH_TYPE, MatchField.VLAN_ID, MatchField.IP_PROTO, MatchField.IP_SRC,
                    MatchField.IP_DST, MatchField.L4_SRC, MatchField.L4_DST, MatchField.IP_TOS,
                    MatchField.ICMP_TYPE),
            EnumSet.of(MatchField.ETH_SRC, MatchField.ETH_DST, MatchField.VLAN_ID, MatchField.IP_SRC,
                    MatchField.IP_DST, MatchField.L4_SRC, MatchField.L4_DST, MatchField.IP_TOS, MatchField.IP_TTL),
            true, true, 65_000, false, true);

    /** Metron's P4 tagging pipeline: ternary/range matches on L3-L4, writes only the tag (dst MAC / VLAN). */
    public static final TargetProfile P4_TAGGER = new TargetProfile("P4_TAGGER",
            EnumSet.of(MatchField.ETH_TYPE, MatchField.IP_PROTO, MatchField.IP_SRC, MatchField.IP_DST,
                    MatchField.L4_SRC, MatchField.L4_DST, MatchField.TCP_FLAGS, MatchField.IP_TOS,
                    MatchField.IP_TTL, MatchField.IP_FRAG, MatchField.ICMP_TYPE),
            EnumSet.noneOf(MatchField.class), false, false, 4096);

    /** A NIC through DPDK rte_flow: spec/mask matches on L3-L4, queue/drop only (never forwards to egress). */
    public static final TargetProfile NIC_RTE_FLOW = new TargetProfile("NIC_RTE_FLOW",
            EnumSet.of(MatchField.ETH_TYPE, MatchField.VLAN_ID, MatchField.IP_PROTO, MatchField.IP_SRC,
                    MatchField.IP_DST, MatchField.L4_SRC, MatchField.L4_DST, MatchField.IP_TOS),
            EnumSet.noneOf(MatchField.class), true, false, 1024);

    /** No offload: everything is classified in software. */
    public static final TargetProfile NONE = new TargetProfile("NONE", EnumSet.noneOf(MatchField.class),
            EnumSet.noneOf(MatchField.class), true, false, 0);

    private final String name;
    private final Set<MatchField> matchable;
    private final Set<MatchField> writable;
    private final boolean rangesAsPrefixes;
    private final boolean canEgress;
    private final int capacity;
    private final boolean l4InFirstFragments;
    private final boolean untaggedOnly;

    /**
     * Creates a profile of a device that reads the transport fields of first fragments and matches tagged and
     * untagged frames alike (see the full constructor).
     */
    public TargetProfile(String name, Set<MatchField> matchable, Set<MatchField> writable, boolean rangesAsPrefixes,
                         boolean canEgress, int capacity) {
        this(name, matchable, writable, rangesAsPrefixes, canEgress, capacity, true, false);
    }

    /**
     * Creates a profile.
     *
     * @param name             profile name
     * @param matchable        fields the device can match
     * @param writable         fields the device can write (IP_TTL = can decrement TTL)
     * @param rangesAsPrefixes true if ranges must be expressed as value/mask pairs
     * @param canEgress        true if the device can send a class straight to the chain's egress
     * @param capacity         number of rules the device holds for this chain
     * @param l4InFirstFragments true if the device reads the ports/ICMP type of first fragments (offset 0); false
     *                         if it reads them as 0 in every fragment (OVS in OpenFlow's "normal" fragment mode)
     * @param untaggedOnly     true if every rule also matches "no VLAN tag" (the device needs VLAN_ID matching)
     */
    public TargetProfile(String name, Set<MatchField> matchable, Set<MatchField> writable, boolean rangesAsPrefixes,
                         boolean canEgress, int capacity, boolean l4InFirstFragments, boolean untaggedOnly) {
        this.name = Objects.requireNonNull(name, "name");
        this.matchable = Set.copyOf(matchable);
        this.writable = Set.copyOf(writable);
        this.rangesAsPrefixes = rangesAsPrefixes;
        this.canEgress = canEgress;
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        }
        this.capacity = capacity;
        this.l4InFirstFragments = l4InFirstFragments;
        if (untaggedOnly && !matchable.contains(MatchField.VLAN_ID)) {
            throw new IllegalArgumentException("profile " + name + " matches untagged frames only but cannot match "
                    + "VLAN_ID");
        }
        this.untaggedOnly = untaggedOnly;
    }

    /**
     * Returns a built-in profile by name (case-insensitive).
     *
     * @throws SynthesisException naming the unknown profile and the known ones
     */
    public static TargetProfile named(String name) {
        for (TargetProfile p : new TargetProfile[] {OPENFLOW13, P4_TAGGER, NIC_RTE_FLOW, NONE}) {
            if (p.name.equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new SynthesisException("unknown target profile '" + name
                + "', expected one of OPENFLOW13, P4_TAGGER, NIC_RTE_FLOW, NONE");
    }

    /** The same profile with another rule capacity. */
    public TargetProfile withCapacity(int newCapacity) {
        return new TargetProfile(name, matchable, writable, rangesAsPrefixes, canEgress, newCapacity,
                l4InFirstFragments, untaggedOnly);
    }

    public String name() {
        return name;
    }

    public Set<MatchField> matchable() {
        return matchable;
    }

    public Set<MatchField> writable() {
        return writable;
    }

    public boolean rangesAsPrefixes() {
        return rangesAsPrefixes;
    }

    public boolean canEgress() {
        return canEgress;
    }

    public int capacity() {
        return capacity;
    }

    /**
     * True if the device reads the transport ports and ICMP type of a first fragment (offset 0, more-fragments
     * set); false if it parses fragments as Open vSwitch does in OpenFlow's default fragment mode: ports and
     * ICMP type read 0 in every fragment, and a later IPv6 fragment's protocol reads as its fragment header's
     * (44). Either way ports read 0 in later fragments, which carry no transport header.
     */
    public boolean l4InFirstFragments() {
        return l4InFirstFragments;
    }

    /** True if every rule also matches "no VLAN tag" ({@link RuleMatch#UNTAGGED}). */
    public boolean untaggedOnly() {
        return untaggedOnly;
    }

    @Override
    public String toString() {
        return name;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TargetProfile)) {
            return false;
        }
        TargetProfile p = (TargetProfile) o;
        return name.equals(p.name) && matchable.equals(p.matchable) && writable.equals(p.writable)
                && rangesAsPrefixes == p.rangesAsPrefixes && canEgress == p.canEgress && capacity == p.capacity
                && l4InFirstFragments == p.l4InFirstFragments && untaggedOnly == p.untaggedOnly;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, matchable, writable, rangesAsPrefixes, canEgress, capacity, l4InFirstFragments,
                untaggedOnly);
    }
}
