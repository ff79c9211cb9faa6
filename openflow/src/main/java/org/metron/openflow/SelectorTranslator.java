package org.metron.openflow;

import org.onlab.packet.Ip4Prefix;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
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
import org.projectfloodlight.openflow.protocol.OFFactory;
import org.projectfloodlight.openflow.protocol.match.Match;
import org.projectfloodlight.openflow.protocol.match.MatchField;
import org.projectfloodlight.openflow.types.IPv4Address;
import org.projectfloodlight.openflow.types.IPv4AddressWithMask;
import org.projectfloodlight.openflow.types.IPv6AddressWithMask;
import org.projectfloodlight.openflow.types.ICMPv4Type;
import org.projectfloodlight.openflow.types.IpDscp;
import org.projectfloodlight.openflow.types.IpEcn;
import org.projectfloodlight.openflow.types.IpProtocol;
import org.projectfloodlight.openflow.types.MacAddress;
import org.projectfloodlight.openflow.types.Masked;
import org.projectfloodlight.openflow.types.OFPort;
import org.projectfloodlight.openflow.types.OFVlanVidMatch;
import org.projectfloodlight.openflow.types.TransportPort;
import org.projectfloodlight.openflow.types.U8;

/**
 * ONOS traffic selectors to OpenFlow 1.3 matches and back: one criterion per match field (masked where ONOS
 * masks it). A criterion with no OpenFlow 1.3 field here, or a field with no ONOS criterion, is refused.
 */
final class SelectorTranslator {
    private final OFFactory of;

    SelectorTranslator(OFFactory of) {
        this.of = of;
    }

    // ---- ONOS -> OpenFlow ---------------------------------------------------------------------------------

    /** The match of a rule's selector; names the rule in errors. */
    Match match(FlowRule rule) {
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

    // ---- OpenFlow -> ONOS ---------------------------------------------------------------------------------

    /** The selector a match was made from ({@link #match}'s inverse). */
    @SuppressWarnings("unchecked")
    static TrafficSelector selector(Match match) {
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
}
