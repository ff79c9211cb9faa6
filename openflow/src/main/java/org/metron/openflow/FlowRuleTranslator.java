package org.metron.openflow;

import org.onlab.packet.EthType;
import org.onlab.packet.Ip4Prefix;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.EthTypeCriterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.criteria.IPDscpCriterion;
import org.onosproject.net.flow.criteria.IPEcnCriterion;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.IcmpTypeCriterion;
import org.onosproject.net.flow.criteria.Icmpv6TypeCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;
import org.onosproject.net.flow.criteria.VlanIdCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction;
import org.onosproject.net.flow.instructions.L3ModificationInstruction;
import org.onosproject.net.flow.instructions.L4ModificationInstruction;
import org.projectfloodlight.openflow.protocol.OFFactory;
import org.projectfloodlight.openflow.protocol.OFFlowMod;
import org.projectfloodlight.openflow.protocol.OFFlowModFlags;
import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFFlowStatsEntry;
import org.projectfloodlight.openflow.protocol.action.OFAction;
import org.projectfloodlight.openflow.protocol.action.OFActionOutput;
import org.projectfloodlight.openflow.protocol.action.OFActionPushVlan;
import org.projectfloodlight.openflow.protocol.action.OFActionSetField;
import org.projectfloodlight.openflow.protocol.instruction.OFInstruction;
import org.projectfloodlight.openflow.protocol.instruction.OFInstructionApplyActions;
import org.projectfloodlight.openflow.protocol.instruction.OFInstructionGotoTable;
import org.projectfloodlight.openflow.protocol.match.Match;
import org.projectfloodlight.openflow.protocol.match.MatchField;
import org.projectfloodlight.openflow.protocol.oxm.OFOxm;
import org.projectfloodlight.openflow.types.IPv4Address;
import org.projectfloodlight.openflow.types.IPv4AddressWithMask;
import org.projectfloodlight.openflow.types.IPv6Address;
import org.projectfloodlight.openflow.types.IPv6AddressWithMask;
import org.projectfloodlight.openflow.types.ICMPv4Type;
import org.projectfloodlight.openflow.types.IpDscp;
import org.projectfloodlight.openflow.types.IpEcn;
import org.projectfloodlight.openflow.types.IpProtocol;
import org.projectfloodlight.openflow.types.MacAddress;
import org.projectfloodlight.openflow.types.Masked;
import org.projectfloodlight.openflow.types.OFBufferId;
import org.projectfloodlight.openflow.types.OFGroup;
import org.projectfloodlight.openflow.types.OFPort;
import org.projectfloodlight.openflow.types.OFVlanVidMatch;
import org.projectfloodlight.openflow.types.TableId;
import org.projectfloodlight.openflow.types.TransportPort;
import org.projectfloodlight.openflow.types.U64;
import org.projectfloodlight.openflow.types.U8;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * ONOS flow rules to OpenFlow 1.3 flow mods and back. The rule's id becomes the flow cookie, so entries read
 * back from the switch are matched to the rules Metron installed. Anything this translator cannot express is
 * rejected with a message naming the rule and the criterion or instruction, before anything is sent.
 */
public final class FlowRuleTranslator {
    private final OFFactory of;

    public FlowRuleTranslator(OFFactory factory) {
        this.of = factory;
    }

    // ---- ONOS -> OpenFlow ---------------------------------------------------------------------------------

    public OFFlowMod add(FlowRule rule) {
        OFFlowMod.Builder b = of.buildFlowAdd().setFlags(EnumSet.of(OFFlowModFlags.SEND_FLOW_REM));
        b.setIdleTimeout(rule.isPermanent() ? 0 : rule.timeout()).setHardTimeout(rule.hardTimeout())
                .setInstructions(instructions(rule)).setBufferId(OFBufferId.NO_BUFFER);
        return common(b, rule).build();
    }

    /** Strict delete: only the entry with exactly this match and priority. */
    /**
     * An OpenFlow 1.3 fast-failover group add: each bucket watches its port (OVS takes a bucket whose watched port
     * is live, first in order) and carries its treatment's actions.
     */
    public org.projectfloodlight.openflow.protocol.OFGroupAdd addGroup(int groupId,
            List<org.onosproject.net.PortNumber> watchPorts, List<TrafficTreatment> treatments) {
        List<org.projectfloodlight.openflow.protocol.OFBucket> buckets = new ArrayList<>();
        for (int k = 0; k < watchPorts.size(); k++) {
            List<OFAction> actions = new ArrayList<>();
            for (OFInstruction i : instructions(treatments.get(k), "group " + groupId + " bucket " + k)) {
                if (!(i instanceof org.projectfloodlight.openflow.protocol.instruction.OFInstructionApplyActions)) {
                    throw new IllegalArgumentException("group " + groupId + " bucket " + k + ": only actions fit in "
                            + "a bucket, not " + i);
                }
                actions.addAll(((org.projectfloodlight.openflow.protocol.instruction.OFInstructionApplyActions) i)
                        .getActions());
            }
            buckets.add(of.buildBucket().setWatchPort(OFPort.of((int) watchPorts.get(k).toLong()))
                    .setWatchGroup(OFGroup.ANY).setActions(actions).build());
        }
        return of.buildGroupAdd().setGroup(OFGroup.of(groupId))
                .setGroupType(org.projectfloodlight.openflow.protocol.OFGroupType.FF).setBuckets(buckets).build();
    }

    /** Deletes one group (and, in the switch, the flows that send to it). */
    public org.projectfloodlight.openflow.protocol.OFGroupDelete deleteGroup(int groupId) {
        return of.buildGroupDelete().setGroup(OFGroup.of(groupId))
                .setGroupType(org.projectfloodlight.openflow.protocol.OFGroupType.FF).build();
    }

    public OFFlowMod deleteStrict(FlowRule rule) {
        return common(of.buildFlowDeleteStrict(), rule).setOutPort(OFPort.ANY).setOutGroup(OFGroup.ANY).build();
    }

    /** Deletes every entry of every table (OF1.3 needs table ALL, out_port ANY, out_group ANY). */
    public OFFlowMod deleteAll() {
        return of.buildFlowDelete().setTableId(TableId.ALL).setOutPort(OFPort.ANY).setOutGroup(OFGroup.ANY)
                .setMatch(of.buildMatch().build()).build();
    }

    private OFFlowMod.Builder common(OFFlowMod.Builder b, FlowRule rule) {
        return b.setCookie(U64.of(rule.id().value())).setPriority(rule.priority())
                .setTableId(TableId.of(rule.tableId())).setMatch(match(rule));
    }

    public Match match(FlowRule rule) {
        Match.Builder m = of.buildMatch();
        for (Criterion c : rule.selector().criteria()) {
            switch (c.type()) {
                case IN_PORT:
                    m.setExact(MatchField.IN_PORT, OFPort.of((int) ((PortCriterion) c).port().toLong()));
                    break;
                case ETH_TYPE:
                    m.setExact(MatchField.ETH_TYPE,
                               org.projectfloodlight.openflow.types.EthType.of(
                                       ((EthTypeCriterion) c).ethType().toShort() & 0xffff));
                    break;
                case ETH_SRC:
                case ETH_SRC_MASKED:
                case ETH_DST:
                case ETH_DST_MASKED: {
                    EthCriterion e = (EthCriterion) c;
                    MatchField<MacAddress> f = c.type() == Criterion.Type.ETH_SRC
                            || c.type() == Criterion.Type.ETH_SRC_MASKED ? MatchField.ETH_SRC : MatchField.ETH_DST;
                    MacAddress mac = MacAddress.of(e.mac().toBytes());
                    if (e.mask() == null) {
                        m.setExact(f, mac);
                    } else {
                        m.setMasked(f, mac, MacAddress.of(e.mask().toBytes()));
                    }
                    break;
                }
                case VLAN_VID: {
                    VlanId vid = ((VlanIdCriterion) c).vlanId();
                    if (vid.equals(VlanId.NONE)) {
                        m.setExact(MatchField.VLAN_VID, OFVlanVidMatch.UNTAGGED);
                    } else if (vid.equals(VlanId.ANY)) {
                        m.setMasked(MatchField.VLAN_VID, OFVlanVidMatch.PRESENT, OFVlanVidMatch.PRESENT);
                    } else {
                        m.setExact(MatchField.VLAN_VID, OFVlanVidMatch.ofVlan(vid.toShort()));
                    }
                    break;
                }
                case IP_PROTO:
                    m.setExact(MatchField.IP_PROTO, IpProtocol.of(((IPProtocolCriterion) c).protocol()));
                    break;
                case IP_DSCP:
                    m.setExact(MatchField.IP_DSCP, IpDscp.of(((IPDscpCriterion) c).ipDscp()));
                    break;
                case IP_ECN:
                    m.setExact(MatchField.IP_ECN, IpEcn.of(((IPEcnCriterion) c).ipEcn()));
                    break;
                case ICMPV4_TYPE:
                    m.setExact(MatchField.ICMPV4_TYPE, ICMPv4Type.of(((IcmpTypeCriterion) c).icmpType()));
                    break;
                case ICMPV6_TYPE:
                    m.setExact(MatchField.ICMPV6_TYPE, U8.of(((Icmpv6TypeCriterion) c).icmpv6Type()));
                    break;
                case IPV4_SRC:
                case IPV4_DST: {
                    Ip4Prefix p = ((IPCriterion) c).ip().getIp4Prefix();
                    MatchField<IPv4Address> f = c.type() == Criterion.Type.IPV4_SRC
                            ? MatchField.IPV4_SRC : MatchField.IPV4_DST;
                    IPv4AddressWithMask am = IPv4AddressWithMask.of(p.toString());
                    if (p.prefixLength() == 32) {
                        m.setExact(f, am.getValue());
                    } else {
                        m.setMasked(f, am.getValue(), am.getMask());
                    }
                    break;
                }
                case IPV6_SRC:
                case IPV6_DST: {
                    IpPrefix p = ((IPCriterion) c).ip();
                    IPv6AddressWithMask am = IPv6AddressWithMask.of(p.toString());
                    if (c.type() == Criterion.Type.IPV6_SRC) {
                        m.setMasked(MatchField.IPV6_SRC, am.getValue(), am.getMask());
                    } else {
                        m.setMasked(MatchField.IPV6_DST, am.getValue(), am.getMask());
                    }
                    break;
                }
                case TCP_SRC:
                case TCP_SRC_MASKED:
                    port(m, MatchField.TCP_SRC, ((TcpPortCriterion) c).tcpPort(), ((TcpPortCriterion) c).mask());
                    break;
                case TCP_DST:
                case TCP_DST_MASKED:
                    port(m, MatchField.TCP_DST, ((TcpPortCriterion) c).tcpPort(), ((TcpPortCriterion) c).mask());
                    break;
                case UDP_SRC:
                case UDP_SRC_MASKED:
                    port(m, MatchField.UDP_SRC, ((UdpPortCriterion) c).udpPort(), ((UdpPortCriterion) c).mask());
                    break;
                case UDP_DST:
                case UDP_DST_MASKED:
                    port(m, MatchField.UDP_DST, ((UdpPortCriterion) c).udpPort(), ((UdpPortCriterion) c).mask());
                    break;
                default:
                    throw new IllegalArgumentException("rule " + rule.id() + " on " + rule.deviceId()
                            + ": criterion " + c + " is not supported by the OpenFlow 1.3 southbound");
            }
        }
        return m.build();
    }

    private static void port(Match.Builder m, MatchField<TransportPort> f, TpPort value, TpPort mask) {
        if (mask == null || mask.toInt() == 0xffff) {
            m.setExact(f, TransportPort.of(value.toInt()));
        } else {
            m.setMasked(f, TransportPort.of(value.toInt()), TransportPort.of(mask.toInt()));
        }
    }

    private List<OFInstruction> instructions(FlowRule rule) {
        return instructions(rule.treatment(), "rule " + rule.id() + " on " + rule.deviceId());
    }

    /** A treatment's instructions; {@code where} names its rule or bucket in errors. */
    private List<OFInstruction> instructions(TrafficTreatment t, String where) {
        List<OFAction> actions = new ArrayList<>();
        List<OFInstruction> out = new ArrayList<>();
        for (Instruction i : t.allInstructions()) {
            switch (i.type()) {
                case NOACTION:
                    break;
                case OUTPUT:
                    actions.add(of.actions().output(
                            OFPort.of((int) ((Instructions.OutputInstruction) i).port().toLong()), 0xffff));
                    break;
                case L2MODIFICATION:
                    actions.add(l2((L2ModificationInstruction) i, where));
                    break;
                case L3MODIFICATION:
                    actions.add(l3((L3ModificationInstruction) i, where));
                    break;
                case L4MODIFICATION:
                    actions.add(l4((L4ModificationInstruction) i, where));
                    break;
                case GROUP:
                    actions.add(of.actions().group(OFGroup.of(((Instructions.GroupInstruction) i).groupId().id())));
                    break;
                case TABLE:
                    out.add(of.instructions().gotoTable(
                            TableId.of(((Instructions.TableTypeTransition) i).tableId())));
                    break;
                default:
                    throw unsupported(where, i);
            }
        }
        if (t.tableTransition() != null && out.isEmpty()) {
            out.add(of.instructions().gotoTable(TableId.of(t.tableTransition().tableId())));
        }
        // An empty instruction list drops the packet (the OpenFlow 1.3 meaning of "no action").
        if (!actions.isEmpty()) {
            out.add(0, of.instructions().applyActions(actions));
        }
        return out;
    }

    private OFAction l2(L2ModificationInstruction i, String where) {
        switch (i.subtype()) {
            case ETH_DST:
                return of.actions().setField(of.oxms().ethDst(MacAddress.of(
                        ((L2ModificationInstruction.ModEtherInstruction) i).mac().toBytes())));
            case ETH_SRC:
                return of.actions().setField(of.oxms().ethSrc(MacAddress.of(
                        ((L2ModificationInstruction.ModEtherInstruction) i).mac().toBytes())));
            case VLAN_PUSH:
                return of.actions().pushVlan(org.projectfloodlight.openflow.types.EthType.of(
                        ((L2ModificationInstruction.ModVlanHeaderInstruction) i).ethernetType().toShort() & 0xffff));
            case VLAN_POP:
                return of.actions().popVlan();
            case VLAN_ID:
                // OF1.3 set_field of vlan_vid carries the "present" bit (shared/notes/dataplane.md).
                return of.actions().setField(of.oxms().vlanVid(OFVlanVidMatch.ofVlan(
                        ((L2ModificationInstruction.ModVlanIdInstruction) i).vlanId().toShort())));
            default:
                throw unsupported(where, i);
        }
    }

    /** Address rewrites and TTL decrement: what a class the switch forwards alone may need (TO_EGRESS). */
    private OFAction l3(L3ModificationInstruction i, String where) {
        switch (i.subtype()) {
            case DEC_TTL:
                return of.actions().decNwTtl();
            // ONOS's setIpSrc/setIpDst give an IPV4_* subtype for IPv6 addresses too: the address decides
            case IPV4_SRC:
            case IPV6_SRC:
                return of.actions().setField(ip(i).isIp4() ? of.oxms().ipv4Src(IPv4Address.of(ip(i).toOctets()))
                        : of.oxms().ipv6Src(IPv6Address.of(ip(i).toOctets())));
            case IPV4_DST:
            case IPV6_DST:
                return of.actions().setField(ip(i).isIp4() ? of.oxms().ipv4Dst(IPv4Address.of(ip(i).toOctets()))
                        : of.oxms().ipv6Dst(IPv6Address.of(ip(i).toOctets())));
            default:
                throw unsupported(where, i);
        }
    }

    private static org.onlab.packet.IpAddress ip(L3ModificationInstruction i) {
        return ((L3ModificationInstruction.ModIPInstruction) i).ip();
    }

    private OFAction l4(L4ModificationInstruction i, String where) {
        TransportPort port = TransportPort.of(((L4ModificationInstruction.ModTransportPortInstruction) i).port()
                .toInt());
        switch (i.subtype()) {
            case TCP_SRC:
                return of.actions().setField(of.oxms().tcpSrc(port));
            case TCP_DST:
                return of.actions().setField(of.oxms().tcpDst(port));
            case UDP_SRC:
                return of.actions().setField(of.oxms().udpSrc(port));
            case UDP_DST:
                return of.actions().setField(of.oxms().udpDst(port));
            default:
                throw unsupported(where, i);
        }
    }

    private static IllegalArgumentException unsupported(String where, Instruction i) {
        return new IllegalArgumentException(where + ": instruction " + i
                + " is not supported by the OpenFlow 1.3 southbound");
    }

    // ---- OpenFlow -> ONOS ---------------------------------------------------------------------------------

    /** A group bucket's actions as the treatment they were made from ({@link #addGroup}'s inverse). */
    public TrafficTreatment bucketTreatment(List<OFAction> actions) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        actions.forEach(a -> action(t, a));
        return t.build();
    }

    /** The rule a flow entry represents, rebuilt from the switch's own view (id = the entry's cookie). */
    public FlowRule toRule(DeviceId device, OFFlowStatsEntry e) {
        return rule(device, e.getCookie(), e.getPriority(), e.getTableId(), selector(e.getMatch()),
                    treatment(e.getInstructions()), e.getIdleTimeout(), e.getHardTimeout());
    }

    /**
     * The rule a FLOW_REMOVED message names (id = its cookie; the message carries no instructions, so the
     * treatment is empty: enough to find the rule by id).
     */
    public FlowRule toRule(DeviceId device, OFFlowRemoved e) {
        return rule(device, e.getCookie(), e.getPriority(), e.getTableId(), selector(e.getMatch()),
                    DefaultTrafficTreatment.emptyTreatment(), e.getIdleTimeout(), e.getHardTimeout());
    }

    private static FlowRule rule(DeviceId device, U64 cookie, int priority, TableId table, TrafficSelector selector,
                                 TrafficTreatment treatment, int idleTimeout, int hardTimeout) {
        FlowRule.Builder b = DefaultFlowRule.builder().forDevice(device).withCookie(cookie.getValue())
                .withPriority(priority).forTable(table.getValue()).withSelector(selector).withTreatment(treatment)
                .withHardTimeout(hardTimeout);
        if (idleTimeout == 0) {
            b.makePermanent();
        } else {
            b.makeTemporary(idleTimeout);
        }
        return b.build();
    }

    /** A flow entry with the switch's counters, for {@code rule} (the rule as Metron installed it). */
    public static FlowEntry toEntry(FlowRule rule, OFFlowStatsEntry e) {
        return new DefaultFlowEntry(rule, FlowEntry.FlowEntryState.ADDED, e.getDurationSec(),
                                    e.getPacketCount().getValue(), e.getByteCount().getValue());
    }

    @SuppressWarnings("unchecked")
    TrafficSelector selector(Match match) {
        TrafficSelector.Builder s = DefaultTrafficSelector.builder();
        for (MatchField<?> f : match.getMatchFields()) {
            boolean masked = match.isPartiallyMasked(f);
            switch (f.id) {
                case IN_PORT:
                    s.matchInPort(PortNumber.portNumber(match.get(MatchField.IN_PORT).getPortNumber()));
                    break;
                case ETH_TYPE:
                    s.matchEthType((short) match.get(MatchField.ETH_TYPE).getValue());
                    break;
                case ETH_SRC:
                case ETH_DST: {
                    MatchField<MacAddress> mf = (MatchField<MacAddress>) f;
                    boolean src = f.id == org.projectfloodlight.openflow.protocol.match.MatchFields.ETH_SRC;
                    if (masked) {
                        Masked<MacAddress> v = match.getMasked(mf);
                        org.onlab.packet.MacAddress mac = org.onlab.packet.MacAddress.valueOf(v.getValue().getBytes());
                        org.onlab.packet.MacAddress mask = org.onlab.packet.MacAddress.valueOf(v.getMask().getBytes());
                        if (src) {
                            s.matchEthSrcMasked(mac, mask);
                        } else {
                            s.matchEthDstMasked(mac, mask);
                        }
                    } else {
                        org.onlab.packet.MacAddress mac = org.onlab.packet.MacAddress.valueOf(match.get(mf).getBytes());
                        if (src) {
                            s.matchEthSrc(mac);
                        } else {
                            s.matchEthDst(mac);
                        }
                    }
                    break;
                }
                case VLAN_VID: {
                    if (masked) {
                        s.matchVlanId(VlanId.ANY);
                    } else {
                        OFVlanVidMatch v = match.get(MatchField.VLAN_VID);
                        s.matchVlanId(v.equals(OFVlanVidMatch.UNTAGGED) ? VlanId.NONE
                                              : VlanId.vlanId(v.getVlanVid().getVlan()));
                    }
                    break;
                }
                case IP_PROTO:
                    s.matchIPProtocol((byte) match.get(MatchField.IP_PROTO).getIpProtocolNumber());
                    break;
                case IP_DSCP:
                    s.matchIPDscp(match.get(MatchField.IP_DSCP).getDscpValue());
                    break;
                case IP_ECN:
                    s.matchIPEcn(match.get(MatchField.IP_ECN).getEcnValue());
                    break;
                case ICMPV4_TYPE:
                    s.matchIcmpType((byte) match.get(MatchField.ICMPV4_TYPE).getType());
                    break;
                case ICMPV6_TYPE:
                    s.matchIcmpv6Type((byte) match.get(MatchField.ICMPV6_TYPE).getValue());
                    break;
                case IPV4_SRC:
                case IPV4_DST: {
                    MatchField<IPv4Address> mf = (MatchField<IPv4Address>) f;
                    Masked<IPv4Address> v = masked ? match.getMasked(mf)
                            : Masked.of(match.get(mf), IPv4Address.NO_MASK);
                    IpPrefix p = IpPrefix.valueOf(v.getValue().getInt(), v.getMask().asCidrMaskLength());
                    if (f.id == org.projectfloodlight.openflow.protocol.match.MatchFields.IPV4_SRC) {
                        s.matchIPSrc(p);
                    } else {
                        s.matchIPDst(p);
                    }
                    break;
                }
                case IPV6_SRC:
                case IPV6_DST: {
                    MatchField<org.projectfloodlight.openflow.types.IPv6Address> mf =
                            (MatchField<org.projectfloodlight.openflow.types.IPv6Address>) f;
                    Masked<org.projectfloodlight.openflow.types.IPv6Address> v = masked ? match.getMasked(mf)
                            : Masked.of(match.get(mf), org.projectfloodlight.openflow.types.IPv6Address.NO_MASK);
                    IpPrefix p = IpPrefix.valueOf(v.getValue().toString() + "/" + v.getMask().asCidrMaskLength());
                    if (f.id == org.projectfloodlight.openflow.protocol.match.MatchFields.IPV6_SRC) {
                        s.matchIPv6Src(p);
                    } else {
                        s.matchIPv6Dst(p);
                    }
                    break;
                }
                case TCP_SRC:
                case TCP_DST:
                case UDP_SRC:
                case UDP_DST:
                    l4(s, f, match, masked);
                    break;
                default:
                    throw new IllegalArgumentException("match field " + f.getName() + " of a flow entry has no "
                            + "ONOS criterion in this southbound");
            }
        }
        return s.build();
    }

    @SuppressWarnings("unchecked")
    private static void l4(TrafficSelector.Builder s, MatchField<?> f, Match match, boolean masked) {
        MatchField<TransportPort> mf = (MatchField<TransportPort>) f;
        TpPort value;
        TpPort mask = null;
        if (masked) {
            Masked<TransportPort> v = match.getMasked(mf);
            value = TpPort.tpPort(v.getValue().getPort());
            mask = TpPort.tpPort(v.getMask().getPort());
        } else {
            value = TpPort.tpPort(match.get(mf).getPort());
        }
        switch (f.id) {
            case TCP_SRC:
                if (mask == null) {
                    s.matchTcpSrc(value);
                } else {
                    s.matchTcpSrcMasked(value, mask);
                }
                break;
            case TCP_DST:
                if (mask == null) {
                    s.matchTcpDst(value);
                } else {
                    s.matchTcpDstMasked(value, mask);
                }
                break;
            case UDP_SRC:
                if (mask == null) {
                    s.matchUdpSrc(value);
                } else {
                    s.matchUdpSrcMasked(value, mask);
                }
                break;
            default:
                if (mask == null) {
                    s.matchUdpDst(value);
                } else {
                    s.matchUdpDstMasked(value, mask);
                }
        }
    }

    TrafficTreatment treatment(List<OFInstruction> instructions) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        boolean any = false;
        for (OFInstruction i : instructions) {
            if (i instanceof OFInstructionGotoTable) {
                t.transition((int) ((OFInstructionGotoTable) i).getTableId().getValue());
                any = true;
            } else if (i instanceof OFInstructionApplyActions) {
                for (OFAction a : ((OFInstructionApplyActions) i).getActions()) {
                    any = true;
                    action(t, a);
                }
            } else {
                throw new IllegalArgumentException("instruction " + i + " has no ONOS equivalent here");
            }
        }
        if (!any) {
            t.drop();
        }
        return t.build();
    }

    private static void action(TrafficTreatment.Builder t, OFAction a) {
        if (a instanceof org.projectfloodlight.openflow.protocol.action.OFActionGroup) {
            t.group(org.onosproject.core.GroupId.valueOf(
                    ((org.projectfloodlight.openflow.protocol.action.OFActionGroup) a).getGroup().getGroupNumber()));
        } else if (a instanceof OFActionOutput) {
            t.setOutput(PortNumber.portNumber(((OFActionOutput) a).getPort().getPortNumber() & 0xffffffffL));
        } else if (a instanceof OFActionPushVlan) {
            t.pushVlan(new EthType(((OFActionPushVlan) a).getEthertype().getValue()));
        } else if (a instanceof org.projectfloodlight.openflow.protocol.action.OFActionPopVlan) {
            t.popVlan();
        } else if (a instanceof org.projectfloodlight.openflow.protocol.action.OFActionDecNwTtl) {
            t.decNwTtl();
        } else if (a instanceof OFActionSetField) {
            OFOxm<?> oxm = ((OFActionSetField) a).getField();
            Object v = oxm.getValue();
            switch (oxm.getMatchField().id) {
                case ETH_DST:
                    t.setEthDst(org.onlab.packet.MacAddress.valueOf(((MacAddress) v).getBytes()));
                    break;
                case ETH_SRC:
                    t.setEthSrc(org.onlab.packet.MacAddress.valueOf(((MacAddress) v).getBytes()));
                    break;
                case VLAN_VID:
                    t.setVlanId(VlanId.vlanId(((OFVlanVidMatch) v).getVlanVid().getVlan()));
                    break;
                case IPV4_SRC:
                    t.setIpSrc(org.onlab.packet.IpAddress.valueOf(((IPv4Address) v).getInt()));
                    break;
                case IPV4_DST:
                    t.setIpDst(org.onlab.packet.IpAddress.valueOf(((IPv4Address) v).getInt()));
                    break;
                case IPV6_SRC:
                    t.setIpSrc(org.onlab.packet.IpAddress.valueOf(org.onlab.packet.IpAddress.Version.INET6,
                            ((IPv6Address) v).getBytes()));
                    break;
                case IPV6_DST:
                    t.setIpDst(org.onlab.packet.IpAddress.valueOf(org.onlab.packet.IpAddress.Version.INET6,
                            ((IPv6Address) v).getBytes()));
                    break;
                case TCP_SRC:
                    t.setTcpSrc(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                case TCP_DST:
                    t.setTcpDst(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                case UDP_SRC:
                    t.setUdpSrc(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                case UDP_DST:
                    t.setUdpDst(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                default:
                    throw new IllegalArgumentException("set_field " + oxm + " has no ONOS equivalent here");
            }
        } else {
            throw new IllegalArgumentException("action " + a + " has no ONOS equivalent here");
        }
    }
}
