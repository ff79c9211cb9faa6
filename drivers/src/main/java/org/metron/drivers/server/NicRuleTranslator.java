package org.metron.drivers.server;

import com.google.protobuf.ByteString;
import org.metron.agent.v1.NicAction;
import org.metron.agent.v1.NicMatch;
import org.metron.agent.v1.NicRule;
import org.onlab.packet.IpAddress;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criteria;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.EthTypeCriterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;
import org.onosproject.net.flow.criteria.VlanIdCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;

import java.util.List;

/**
 * ONOS FlowRule ↔ agent NicRule, both ways, for a server's NIC rule table.
 * <ul>
 *   <li>id: the FlowRule id, all 64 bits (the original agent truncated them to 32).</li>
 *   <li>NIC: the IN_PORT criterion, through {@link NicPorts}; required.</li>
 *   <li>priority: ONOS's higher-wins 0..65535 becomes rte_flow's 0-is-highest as {@code 65535 - p}.</li>
 *   <li>match: eth dst (masked), VLAN id, eth type, IPv4/IPv6 src/dst prefixes, IP protocol, TCP/UDP ports
 *       (masked).</li>
 *   <li>action: {@code setQueue(q)} → queue q; {@code drop()} (no instructions) → drop;
 *       {@code writeMetadata(m, 0xffffffff)} → mark m.</li>
 * </ul>
 * Anything else is refused with an {@link IllegalArgumentException} naming the rule and the field.
 */
public final class NicRuleTranslator {

    public static final int MAX_ONOS_PRIORITY = 0xffff;
    private static final long MARK_MASK = 0xffffffffL;
    private static final int TCP = 6;
    private static final int UDP = 17;

    private final NicPorts ports;

    public NicRuleTranslator(NicPorts ports) {
        this.ports = ports;
    }

    // ---- FlowRule → NicRule -------------------------------------------------------------------------------

    public NicRule toNicRule(FlowRule rule) {
        String where = "flow rule " + Long.toHexString(rule.id().value());
        if (rule.priority() < 0 || rule.priority() > MAX_ONOS_PRIORITY) {
            throw new IllegalArgumentException(where + ": priority " + rule.priority() + " is not in 0..65535");
        }
        String nic = null;
        NicMatch.Builder m = NicMatch.newBuilder();
        for (Criterion c : rule.selector().criteria()) {
            switch (c.type()) {
                case IN_PORT:
                    PortNumber p = ((PortCriterion) c).port();
                    nic = ports.nic(p).orElseThrow(() -> new IllegalArgumentException(
                            where + ": IN_PORT " + p + " is not a NIC of this server"));
                    break;
                case ETH_DST:
                case ETH_DST_MASKED:
                    EthCriterion e = (EthCriterion) c;
                    m.setEthDst(e.mac().toString().toLowerCase());
                    if (e.mask() != null && !e.mask().equals(MacAddress.BROADCAST)) {
                        m.setEthDstMask(e.mask().toString().toLowerCase());
                    }
                    break;
                case VLAN_VID:
                    m.setVlan(((VlanIdCriterion) c).vlanId().toShort());
                    break;
                case ETH_TYPE:
                    m.setEtherType(((EthTypeCriterion) c).ethType().toShort() & 0xffff);
                    break;
                case IPV4_SRC:
                case IPV6_SRC:
                    IpPrefix src = ((IPCriterion) c).ip();
                    m.setIpSrc(ByteString.copyFrom(src.address().toOctets())).setIpSrcPrefix(src.prefixLength());
                    break;
                case IPV4_DST:
                case IPV6_DST:
                    IpPrefix dst = ((IPCriterion) c).ip();
                    m.setIpDst(ByteString.copyFrom(dst.address().toOctets())).setIpDstPrefix(dst.prefixLength());
                    break;
                case IP_PROTO:
                    m.setIpProto(((IPProtocolCriterion) c).protocol());
                    break;
                case TCP_SRC:
                case TCP_SRC_MASKED:
                    TcpPortCriterion ts = (TcpPortCriterion) c;
                    m.setL4Src(ts.tcpPort().toInt()).setL4SrcMask(mask(ts.mask()));
                    break;
                case TCP_DST:
                case TCP_DST_MASKED:
                    TcpPortCriterion td = (TcpPortCriterion) c;
                    m.setL4Dst(td.tcpPort().toInt()).setL4DstMask(mask(td.mask()));
                    break;
                case UDP_SRC:
                case UDP_SRC_MASKED:
                    UdpPortCriterion us = (UdpPortCriterion) c;
                    m.setL4Src(us.udpPort().toInt()).setL4SrcMask(mask(us.mask()));
                    break;
                case UDP_DST:
                case UDP_DST_MASKED:
                    UdpPortCriterion ud = (UdpPortCriterion) c;
                    m.setL4Dst(ud.udpPort().toInt()).setL4DstMask(mask(ud.mask()));
                    break;
                default:
                    throw new IllegalArgumentException(where + ": NICs cannot match " + c.type());
            }
        }
        if (nic == null) {
            throw new IllegalArgumentException(where + ": needs an IN_PORT criterion naming the NIC");
        }
        return NicRule.newBuilder()
                .setId(rule.id().value())
                .setNic(nic)
                .setPriority(MAX_ONOS_PRIORITY - rule.priority())
                .setMatch(m)
                .setAction(action(where, rule.treatment()))
                .build();
    }

    private static int mask(TpPort mask) {
        return mask == null ? 0xffff : mask.toInt();
    }

    private static NicAction action(String where, TrafficTreatment t) {
        List<Instruction> all = t.allInstructions();
        boolean noAction = all.stream().allMatch(i -> i.type() == Instruction.Type.NOACTION);
        Instructions.MetadataInstruction md = t.writeMetadata();
        if (md != null) {
            // ONOS keeps write-metadata apart from the instruction list
            if (!all.isEmpty() && !noAction) {
                throw new IllegalArgumentException(where + ": a NIC rule has exactly one action, got mark and " + all);
            }
            if (md.metadataMask() != MARK_MASK || (md.metadata() & ~MARK_MASK) != 0) {
                throw new IllegalArgumentException(where + ": a NIC mark is 32 bits: writeMetadata(m, 0xffffffff)");
            }
            return NicAction.newBuilder().setMark((int) md.metadata()).build();
        }
        if (noAction) {
            return NicAction.newBuilder().setDrop(true).build();
        }
        if (all.size() != 1) {
            throw new IllegalArgumentException(where + ": a NIC rule has exactly one action, got " + all);
        }
        Instruction i = all.get(0);
        if (i.type() == Instruction.Type.QUEUE) {
            long q = ((Instructions.SetQueueInstruction) i).queueId();
            if (q < 0 || q > 0xffffffffL) {
                throw new IllegalArgumentException(where + ": queue " + q + " out of range");
            }
            return NicAction.newBuilder().setQueue((int) q).build();
        }
        throw new IllegalArgumentException(where + ": NICs cannot apply " + i.type()
                                                   + " (only QUEUE, drop, write-metadata as mark)");
    }

    // ---- NicRule → FlowRule -------------------------------------------------------------------------------

    public FlowRule toFlowRule(DeviceId device, NicRule r) {
        String where = "NIC rule " + Long.toUnsignedString(r.getId(), 16) + " on " + r.getNic();
        TrafficSelector.Builder s = DefaultTrafficSelector.builder();
        s.matchInPort(ports.port(r.getNic()).orElseThrow(() -> new IllegalArgumentException(
                where + ": the server reports no NIC " + r.getNic())));
        NicMatch m = r.getMatch();
        if (!m.getEthDst().isEmpty()) {
            MacAddress mac = MacAddress.valueOf(m.getEthDst());
            if (m.getEthDstMask().isEmpty()) {
                s.matchEthDst(mac);
            } else {
                s.matchEthDstMasked(mac, MacAddress.valueOf(m.getEthDstMask()));
            }
        }
        if (m.getVlan() != 0) {
            s.matchVlanId(VlanId.vlanId((short) m.getVlan()));
        }
        if (m.getEtherType() != 0) {
            s.matchEthType((short) m.getEtherType());
        }
        if (!m.getIpSrc().isEmpty()) {
            IpPrefix p = prefix(where, m.getIpSrc(), m.getIpSrcPrefix());
            s.add(p.isIp4() ? Criteria.matchIPSrc(p)
                          : Criteria.matchIPv6Src(p));
        }
        if (!m.getIpDst().isEmpty()) {
            IpPrefix p = prefix(where, m.getIpDst(), m.getIpDstPrefix());
            s.add(p.isIp4() ? Criteria.matchIPDst(p)
                          : Criteria.matchIPv6Dst(p));
        }
        if (m.getIpProto() != 0) {
            s.matchIPProtocol((byte) m.getIpProto());
        }
        if (m.getL4SrcMask() != 0) {
            s.add(l4(where, m.getIpProto(), true, m.getL4Src(), m.getL4SrcMask()));
        }
        if (m.getL4DstMask() != 0) {
            s.add(l4(where, m.getIpProto(), false, m.getL4Dst(), m.getL4DstMask()));
        }
        if (r.getPriority() > MAX_ONOS_PRIORITY) {
            throw new IllegalArgumentException(where + ": priority " + r.getPriority() + " has no ONOS equivalent");
        }
        return DefaultFlowRule.builder()
                .forDevice(device)
                .withCookie(r.getId())
                .withPriority(MAX_ONOS_PRIORITY - r.getPriority())
                .withSelector(s.build())
                .withTreatment(treatment(where, r.getAction()))
                .makePermanent()
                .build();
    }

    private static IpPrefix prefix(String where, ByteString bytes, int len) {
        IpAddress.Version v = bytes.size() == 4 ? IpAddress.Version.INET
                : bytes.size() == 16 ? IpAddress.Version.INET6 : null;
        if (v == null) {
            throw new IllegalArgumentException(where + ": IP address of " + bytes.size() + " bytes");
        }
        return IpPrefix.valueOf(IpAddress.valueOf(v, bytes.toByteArray()), len);
    }

    private static Criterion l4(String where, int proto, boolean src, int port, int mask) {
        TpPort p = TpPort.tpPort(port);
        TpPort k = TpPort.tpPort(mask);
        boolean exact = mask == 0xffff;
        if (proto == TCP) {
            return src ? (exact ? Criteria.matchTcpSrc(p)
                    : Criteria.matchTcpSrcMasked(p, k))
                    : (exact ? Criteria.matchTcpDst(p)
                    : Criteria.matchTcpDstMasked(p, k));
        }
        if (proto == UDP) {
            return src ? (exact ? Criteria.matchUdpSrc(p)
                    : Criteria.matchUdpSrcMasked(p, k))
                    : (exact ? Criteria.matchUdpDst(p)
                    : Criteria.matchUdpDstMasked(p, k));
        }
        throw new IllegalArgumentException(where + ": L4 ports with IP protocol " + proto + " (need TCP or UDP)");
    }

    private static TrafficTreatment treatment(String where, NicAction a) {
        switch (a.getActionCase()) {
            case QUEUE:
                return DefaultTrafficTreatment.builder()
                        .add(Instructions.setQueue(Integer.toUnsignedLong(a.getQueue()), null)).build();
            case DROP:
                return DefaultTrafficTreatment.builder().drop().build();
            case MARK:
                return DefaultTrafficTreatment.builder()
                        .writeMetadata(Integer.toUnsignedLong(a.getMark()), MARK_MASK).build();
            default:
                throw new IllegalArgumentException(where + ": no action");
        }
    }
}
