package org.metron.synth.check;

import org.metron.synth.IpPrefix;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/** Test packets. */
public final class Pkt {
    private final long[] v = new long[Field.COUNT];
    private byte[] payload = new byte[0];

    private Pkt() {
    }

    /** A TCP/UDP/other packet between two addresses of the same family, TTL 64. */
    public static Pkt of(String src, String dst, int proto, int sport, int dport) {
        Pkt p = new Pkt();
        IpPrefix s = IpPrefix.parse(src);
        IpPrefix d = IpPrefix.parse(dst);
        p.v[Field.ETH_TYPE.ordinal()] = s.isIp6() ? Field.ETH_IP6 : Field.ETH_IP4;
        p.addr(s, true);
        p.addr(d, false);
        p.v[Field.IP_PROTO.ordinal()] = proto;
        p.v[Field.L4_SRC.ordinal()] = sport;
        p.v[Field.L4_DST.ordinal()] = dport;
        p.v[Field.TTL.ordinal()] = 64;
        p.v[Field.ETH_DST.ordinal()] = 0x020000000099L;
        return p;
    }

    private void addr(IpPrefix a, boolean src) {
        if (a.isIp6()) {
            BigInteger x = a.address();
            v[(src ? Field.IP6_SRC_HI : Field.IP6_DST_HI).ordinal()] = x.shiftRight(64).longValue();
            v[(src ? Field.IP6_SRC_LO : Field.IP6_DST_LO).ordinal()] = x.longValue();
        } else {
            v[(src ? Field.IP4_SRC : Field.IP4_DST).ordinal()] = a.address().longValue();
        }
    }

    public Pkt set(Field f, long value) {
        v[f.ordinal()] = value;
        return this;
    }

    public Pkt payload(String s) {
        payload = s.getBytes(StandardCharsets.ISO_8859_1);
        return this;
    }

    public Packet build() {
        return new Packet(v.clone(), payload);
    }
}
