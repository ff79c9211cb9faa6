package org.metron.app.scaling;

import org.metron.app.api.Tag;
import org.metron.app.api.TagType;
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
}
