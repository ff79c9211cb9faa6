package org.metron.synth.packet;

import org.metron.synth.IpPrefix;
import org.metron.synth.hs.Field;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/** Human-readable packet text for mismatch reports and traces. */
public final class PacketText {
    private PacketText() {
    }

    /** One line: family, addresses, protocol, ports, flags, TTL, TOS, fragment bits, payload preview. */
    public static String format(Packet p) {
        StringBuilder sb = new StringBuilder();
        if (p.check != HeaderCheck.VALID) {
            sb.append(p.check).append(String.format(" frame (ethertype 0x%04x) ", p.get(Field.ETH_TYPE)));
        }
        sb.append(p.isIp6() ? "IPv6 " : "IPv4 ").append(addr(p, true)).append(" -> ").append(addr(p, false));
        sb.append(" proto ").append(p.get(Field.IP_PROTO));
        sb.append(" sport ").append(p.get(Field.L4_SRC)).append(" dport ").append(p.get(Field.L4_DST));
        int flags = 0;
        for (Field f : Field.values()) {
            if (f.tcpFlagBit() != 0 && p.get(f) != 0) {
                flags |= f.tcpFlagBit();
            }
        }
        sb.append(String.format(" flags 0x%02x", flags));
        sb.append(" ttl ").append(p.get(Field.TTL)).append(" tos ").append(p.get(Field.TOS));
        sb.append(" mf ").append(p.get(Field.IP_MF)).append(" offset ").append(p.get(Field.IP_OFFSET));
        sb.append(" icmp ").append(p.get(Field.ICMP_TYPE));
        sb.append(String.format(" eth %012x>%012x vlan %d", p.get(Field.ETH_SRC), p.get(Field.ETH_DST),
                p.get(Field.VLAN)));
        if (p.payload.length > 0) {
            String s = new String(p.payload, 0, Math.min(40, p.payload.length), StandardCharsets.ISO_8859_1);
            sb.append(" payload \"").append(s.replaceAll("[^\\x20-\\x7e]", ".")).append('"');
        }
        return sb.toString();
    }

    /** Source or destination address text. */
    public static String addr(Packet p, boolean src) {
        if (p.isIp6()) {
            long hi = p.get(src ? Field.IP6_SRC_HI : Field.IP6_DST_HI);
            long lo = p.get(src ? Field.IP6_SRC_LO : Field.IP6_DST_LO);
            BigInteger a = new BigInteger(Long.toUnsignedString(hi)).shiftLeft(64)
                    .or(new BigInteger(Long.toUnsignedString(lo)));
            return IpPrefix.of(true, a, 128).addressString();
        }
        return IpPrefix.of(false, BigInteger.valueOf(p.get(src ? Field.IP4_SRC : Field.IP4_DST)), 32)
                .addressString();
    }
}
