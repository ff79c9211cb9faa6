package org.metron.app.impl;

import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.synth.HeaderWrite;
import org.metron.synth.IpPrefix;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleMatch;
import org.onlab.packet.IpAddress;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;

import java.util.function.Supplier;

/**
 * Maps the synthesizer's device-neutral matches and header writes to ONOS criteria and instructions. The only
 * place that knows how a {@link RuleMatch} field looks as an ONOS criterion.
 */
final class OffloadRuleTranslator {
    static final int IPV4 = 0x0800;
    static final int IPV6 = 0x86dd;
    private static final int TCP = 6;
    private static final int UDP = 17;
    private static final int SCTP = 132;

    private OffloadRuleTranslator() {
    }

    /** Adds the match's criteria to a selector; {@code where} names the rule in errors (built only then). */
    static void match(RuleMatch m, TrafficSelector.Builder sel, Supplier<String> where) {
        m.ethType().ifPresent(t -> sel.matchEthType(t.shortValue()));
        boolean v6 = m.ethType().map(t -> t == IPV6).orElse(false);
        m.vlan().ifPresent(v -> sel.matchVlanId(VlanId.vlanId(v.shortValue())));
        m.ipProto().ifPresent(p -> sel.matchIPProtocol(p.byteValue()));
        m.ipSrc().ifPresent(p -> {
            if (v6) {
                sel.matchIPv6Src(prefix(p));
            } else {
                sel.matchIPSrc(prefix(p));
            }
        });
        m.ipDst().ifPresent(p -> {
            if (v6) {
                sel.matchIPv6Dst(prefix(p));
            } else {
                sel.matchIPDst(prefix(p));
            }
        });
        int proto = m.ipProto().orElse(-1);
        m.l4Src().ifPresent(r -> port(sel, proto, r, true, where));
        m.l4Dst().ifPresent(r -> port(sel, proto, r, false, where));
        m.tos().ifPresent(r -> tos(sel, r, where));
        m.icmpType().ifPresent(r -> {
            if (r.lo() != r.hi()) {
                throw unsupported(where, "ICMP type range " + r);
            }
            if (v6) {
                sel.matchIcmpv6Type((byte) r.lo());
            } else {
                sel.matchIcmpType((byte) r.lo());
            }
        });
        if (m.tcpFlags().isPresent() || m.ttl().isPresent() || m.fragment().isPresent()) {
            // ONOS 2.7 has no selector builder method for these; only P4 tagger profiles offload them
            throw unsupported(where, "TCP flags, TTL or fragment match");
        }
    }

    /** Adds a header write to a treatment; {@code proto} picks TCP/UDP port instructions. */
    static void write(HeaderWrite w, int proto, TrafficTreatment.Builder t, Supplier<String> where) {
        switch (w.field()) {
            case ETH_SRC:
                t.setEthSrc(MacAddress.valueOf(w.value()));
                break;
            case ETH_DST:
                t.setEthDst(MacAddress.valueOf(w.value()));
                break;
            case VLAN_ID:
                t.setVlanId(VlanId.vlanId(Short.parseShort(w.value())));
                break;
            case IP_SRC:
                t.setIpSrc(IpAddress.valueOf(w.value()));
                break;
            case IP_DST:
                t.setIpDst(IpAddress.valueOf(w.value()));
                break;
            case L4_SRC:
            case L4_DST:
                TpPort port = TpPort.tpPort(Integer.parseInt(w.value()));
                boolean src = w.field() == org.metron.synth.MatchField.L4_SRC;
                if (proto == TCP) {
                    if (src) {
                        t.setTcpSrc(port);
                    } else {
                        t.setTcpDst(port);
                    }
                } else if (proto == UDP) {
                    if (src) {
                        t.setUdpSrc(port);
                    } else {
                        t.setUdpDst(port);
                    }
                } else {
                    throw unsupported(where, "port write without TCP/UDP protocol match");
                }
                break;
            default:
                throw unsupported(where, "write of " + w.field());
        }
    }

    /** From the address bits (formatting and parsing text took a third of rule planning for large chains). */
    static org.onlab.packet.IpPrefix prefix(IpPrefix p) {
        if (!p.isIp6()) {
            return org.onlab.packet.IpPrefix.valueOf(p.address().intValue(), p.length());
        }
        byte[] raw = p.address().toByteArray(); // big-endian, minimal: may lack leading zeros or carry a sign byte
        byte[] bytes = new byte[16];
        int n = Math.min(raw.length, 16);
        System.arraycopy(raw, raw.length - n, bytes, 16 - n, n);
        return org.onlab.packet.IpPrefix.valueOf(IpAddress.Version.INET6, bytes, p.length());
    }

    private static void port(TrafficSelector.Builder sel, int proto, RangeMatch r, boolean src, Supplier<String> where) {
        if (!r.isMaskable()) {
            throw unsupported(where, "port range " + r + " that is not one value/mask");
        }
        TpPort value = TpPort.tpPort(r.value());
        TpPort mask = TpPort.tpPort(r.mask());
        boolean exact = r.mask() == 0xffff;
        if (proto == TCP) {
            if (src) {
                if (exact) {
                    sel.matchTcpSrc(value);
                } else {
                    sel.matchTcpSrcMasked(value, mask);
                }
            } else if (exact) {
                sel.matchTcpDst(value);
            } else {
                sel.matchTcpDstMasked(value, mask);
            }
        } else if (proto == UDP) {
            if (src) {
                if (exact) {
                    sel.matchUdpSrc(value);
                } else {
                    sel.matchUdpSrcMasked(value, mask);
                }
            } else if (exact) {
                sel.matchUdpDst(value);
            } else {
                sel.matchUdpDstMasked(value, mask);
            }
        } else if (proto == SCTP && exact) {
            if (src) {
                sel.matchSctpSrc(value);
            } else {
                sel.matchSctpDst(value);
            }
        } else {
            throw unsupported(where, "L4 port match for IP protocol " + proto);
        }
    }

    private static void tos(TrafficSelector.Builder sel, RangeMatch r, Supplier<String> where) {
        // OpenFlow splits the TOS byte into DSCP (6 bits) and ECN (2 bits)
        if (!r.isMaskable() || (r.mask() != 0xff && r.mask() != 0xfc)) {
            throw unsupported(where, "TOS match " + r + " (only exact TOS or exact DSCP)");
        }
        sel.matchIPDscp((byte) (r.value() >> 2));
        if (r.mask() == 0xff) {
            sel.matchIPEcn((byte) (r.value() & 3));
        }
    }

    private static MetronException unsupported(Supplier<String> where, String what) {
        return new MetronException(Fault.INTERNAL, where.get() + ": " + what + " cannot be expressed as an ONOS "
                + "flow rule; the target profile should not have offloaded it");
    }
}
