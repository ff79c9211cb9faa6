package org.metron.app.impl;

import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criteria;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.VlanIdCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModVlanIdInstruction;

import org.metron.app.api.ClassSlice;
import org.onlab.packet.TpPort;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;

import java.util.Optional;

/**
 * Moves installed switch rules from one group tag to another without re-planning the chain: an offload rule
 * keeps its match, priority and output and only its tag write changes (so its FlowRule id stays the same and
 * the switch replaces it in place); a transit rule is copied with the other tag in its match. Header values
 * come from {@link Tag} only (docs/contracts.md#tags). Pure.
 */
public final class RuleRetagger {
    private RuleRetagger() {
    }

    /**
     * The traffic class an offload or reply rule tags its packets with, when it tags them for group {@code tag}.
     */
    public static Optional<Integer> taggedClass(FlowRule rule, Tag tag) {
        MacAddress dst = null;
        Integer vlan = null;
        for (Instruction i : rule.treatment().allInstructions()) {
            if (i instanceof ModEtherInstruction
                    && ((ModEtherInstruction) i).subtype() == L2ModificationInstruction.L2SubType.ETH_DST) {
                dst = ((ModEtherInstruction) i).mac();
            } else if (i instanceof ModVlanIdInstruction) {
                vlan = (int) ((ModVlanIdInstruction) i).vlanId().toShort();
            }
        }
        if (dst == null) {
            return Optional.empty();
        }
        long v = dst.toLong();
        int cls = (int) (v & 0xFFFF);
        boolean ours = tag.type() == TagType.MAC ? (v & ~0xFFFFL) == (tag.groupMac().toLong() & ~0xFFFFL)
                : vlan != null && vlan == tag.group() && (v >>> 32) == Tag.MAC_PREFIX;
        // the markers are no classes: they name the chain's output, not a group's input
        return ours && cls != Tag.EGRESS_CLASS && cls != Tag.REPLY_EGRESS_CLASS ? Optional.of(cls) : Optional.empty();
    }

    /** The offload rule writing {@code to}'s header values for class {@code cls} instead. */
    public static FlowRule retagOffload(FlowRule rule, int cls, Tag to, ApplicationId app) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        for (Instruction i : rule.treatment().allInstructions()) {
            if (i instanceof ModEtherInstruction
                    && ((ModEtherInstruction) i).subtype() == L2ModificationInstruction.L2SubType.ETH_DST) {
                t.add(Instructions.modL2Dst(to.classMac(cls)));
            } else if (i instanceof ModVlanIdInstruction) {
                t.add(Instructions.modVlanId(VlanId.vlanId((short) to.group())));
            } else {
                t.add(i);
            }
        }
        return copy(rule, rule.selector(), t.build(), app);
    }

    /**
     * {@code rule} with its output port replaced by {@code out}: an offload rule re-tagged toward a group on
     * another server leaves the offload device through the port toward that server (same match and priority: the
     * same FlowRule id, so installing it modifies the rule in place).
     */
    public static FlowRule withOutput(FlowRule rule, org.onosproject.net.PortNumber out, ApplicationId app) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        for (Instruction i : rule.treatment().allInstructions()) {
            t.add(i.type() == Instruction.Type.OUTPUT ? Instructions.createOutput(out) : i);
        }
        return copy(rule, rule.selector(), t.build(), app);
    }

    /** Whether a transit rule forwards group {@code tag} (matches its group bits or its VLAN id). */
    public static boolean matchesGroup(FlowRule rule, Tag tag) {
        for (Criterion c : rule.selector().criteria()) {
            if (tag.type() == TagType.MAC && c.type() == Criterion.Type.ETH_DST_MASKED
                    && ((EthCriterion) c).mac().equals(tag.groupMac())
                    && Tag.GROUP_MASK.equals(((EthCriterion) c).mask())) {
                return true;
            }
            if (tag.type() == TagType.VLAN && c.type() == Criterion.Type.VLAN_VID
                    && ((VlanIdCriterion) c).vlanId().toShort() == tag.group()) {
                return true;
            }
        }
        return false;
    }

    /** A transit rule for group {@code to} along the same hop as {@code rule} (which forwards another group). */
    public static FlowRule transitFor(FlowRule rule, Tag to, ApplicationId app) {
        TrafficSelector.Builder s = DefaultTrafficSelector.builder();
        for (Criterion c : rule.selector().criteria()) {
            if (c.type() == Criterion.Type.ETH_DST_MASKED) {
                s.add(Criteria.matchEthDstMasked(to.groupMac(), Tag.GROUP_MASK));
            } else if (c.type() == Criterion.Type.VLAN_VID) {
                s.add(Criteria.matchVlanId(VlanId.vlanId((short) to.group())));
            } else {
                s.add(c);
            }
        }
        return copy(rule, s.build(), rule.treatment(), app);
    }

    private static FlowRule copy(FlowRule rule, TrafficSelector sel, TrafficTreatment t, ApplicationId app) {
        FlowRule.Builder b = DefaultFlowRule.builder().forDevice(rule.deviceId()).forTable(rule.tableId())
                .withPriority(rule.priority()).withSelector(sel).withTreatment(t);
        // same match and priority = the same table entry, so the same id, however the original's was made
        b = sel.equals(rule.selector()) ? b.withCookie(rule.id().value()) : b.fromApp(app);
        return (rule.isPermanent() ? b.makePermanent() : b.makeTemporary(rule.timeout())).build();
    }

    // ---- class slices (docs/scaling.md#class-split) ---------------------------------------------------------

    /** The criteria that match a TCP or UDP source port. */
    private static final java.util.Set<Criterion.Type> SPORT = java.util.EnumSet.of(Criterion.Type.TCP_SRC,
            Criterion.Type.TCP_SRC_MASKED, Criterion.Type.UDP_SRC, Criterion.Type.UDP_SRC_MASKED);

    /**
     * The source-port bits an offload rule fixes, as a slice (whole when it matches no source port); empty when
     * the rule matches neither TCP nor UDP, so its packets cannot be told apart by source port.
     */
    public static Optional<ClassSlice> sportBits(FlowRule rule) {
        Optional<Criterion.Type> type = sportType(rule);
        if (type.isEmpty()) {
            return Optional.empty();
        }
        for (Criterion c : rule.selector().criteria()) {
            if (SPORT.contains(c.type()) && c instanceof TcpPortCriterion) {
                return Optional.of(bits(((TcpPortCriterion) c).tcpPort(), ((TcpPortCriterion) c).mask()));
            }
            if (SPORT.contains(c.type()) && c instanceof UdpPortCriterion) {
                return Optional.of(bits(((UdpPortCriterion) c).udpPort(), ((UdpPortCriterion) c).mask()));
            }
        }
        return Optional.of(ClassSlice.WHOLE);
    }

    /**
     * The offload rule matching, of {@code rule}'s packets, those whose source port has bit {@code bit} set
     * ({@code one}) or clear, and tagging them for {@code to} (class {@code cls}). Same priority as {@code rule}:
     * the two halves are disjoint and together match exactly what it matched, so first-match order is kept.
     *
     * @throws IllegalArgumentException when the rule matches neither TCP nor UDP or already fixes that bit
     */
    public static FlowRule sliced(FlowRule rule, int cls, int bit, boolean one, Tag to, ApplicationId app) {
        ClassSlice have = sportBits(rule).orElseThrow(() -> new IllegalArgumentException("rule " + rule.id()
                + " on " + rule.deviceId() + " matches neither TCP nor UDP: its packets have no source port"));
        return withSport(rule, cls, have.half(bit, one), to, app);
    }

    /**
     * {@code rule} with bit {@code bit} of its source-port match dropped (a merge joining two halves), tagging
     * for {@code to}: the rule the two halves were made from.
     */
    public static FlowRule unsliced(FlowRule rule, int cls, int bit, Tag to, ApplicationId app) {
        ClassSlice have = sportBits(rule).orElseThrow(() -> new IllegalArgumentException("rule " + rule.id()
                + " has no source-port match to widen"));
        int m = have.mask() & ~(1 << bit);
        return withSport(rule, cls, new ClassSlice(m, have.value() & m), to, app);
    }

    private static Optional<Criterion.Type> sportType(FlowRule rule) {
        for (Criterion c : rule.selector().criteria()) {
            if (c.type() == Criterion.Type.IP_PROTO) {
                short p = ((IPProtocolCriterion) c).protocol();
                return p == 6 ? Optional.of(Criterion.Type.TCP_SRC_MASKED)
                        : p == 17 ? Optional.of(Criterion.Type.UDP_SRC_MASKED) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    private static ClassSlice bits(TpPort port, TpPort mask) {
        int m = mask == null ? 0xffff : mask.toInt();
        return new ClassSlice(m, port.toInt() & m);
    }

    /**
     * {@code rule} matching source ports in {@code sport} (in place of its own source-port match), tagging for
     * {@code to} (class {@code cls}); the id a deployment of that match gets.
     */
    public static FlowRule withSport(FlowRule rule, int cls, ClassSlice sport, Tag to, ApplicationId app) {
        boolean tcp = sportType(rule).orElseThrow() == Criterion.Type.TCP_SRC_MASKED;
        TrafficSelector.Builder s = DefaultTrafficSelector.builder();
        for (Criterion c : rule.selector().criteria()) {
            if (!SPORT.contains(c.type())) {
                s.add(c);
            }
        }
        if (sport.mask() == 0xffff) {
            s.add(tcp ? Criteria.matchTcpSrc(TpPort.tpPort(sport.value()))
                    : Criteria.matchUdpSrc(TpPort.tpPort(sport.value())));
        } else if (!sport.isWhole()) {
            TpPort v = TpPort.tpPort(sport.value());
            TpPort m = TpPort.tpPort(sport.mask());
            s.add(tcp ? Criteria.matchTcpSrcMasked(v, m) : Criteria.matchUdpSrcMasked(v, m));
        }
        TrafficSelector sel = s.build();
        TrafficTreatment t = retagOffload(rule, cls, to, app).treatment();
        FlowRule.Builder b = DefaultFlowRule.builder().forDevice(rule.deviceId()).forTable(rule.tableId())
                .withPriority(rule.priority()).withSelector(sel).withTreatment(t)
                // the id a deployment of this match would get (RulePlanner): the unsliced rule gets its old id back
                .withCookie(FlowIds.of(app, rule.deviceId(), rule.tableId(), rule.priority(), sel));
        return (rule.isPermanent() ? b.makePermanent() : b.makeTemporary(rule.timeout())).build();
    }
}
