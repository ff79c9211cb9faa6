package org.metron.synth.packet;

import org.metron.synth.hs.Field;
import org.metron.synth.packet.FrameCodec.Break;
import org.metron.synth.packet.FrameCodec.Shape;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.metron.synth.packet.FrameCodec.DEST_OPTIONS;
import static org.metron.synth.packet.FrameCodec.ETH_VLAN;
import static org.metron.synth.packet.FrameCodec.FRAGMENT;
import static org.metron.synth.packet.FrameCodec.HOP_BY_HOP;

/**
 * A packet written as an Ethernet frame, in the odd shapes of {@link Shape}: IPv4 options, IPv6 extension
 * headers, VLAN tags, broken headers and checksums.
 */
final class FrameEncoder {
    private FrameEncoder() {
    }

    /** The frame of a packet in a shape; the packet must be well-formed for its {@link HeaderCheck}. */
    static byte[] encode(Packet p, Shape s) {
        Buf b = new Buf();
        b.mac(p.get(Field.ETH_DST)).mac(p.get(Field.ETH_SRC));
        long eth = p.get(Field.ETH_TYPE);
        if (p.check == HeaderCheck.NOT_IP && p.get(Field.VLAN) != 0) {
            b.u16(ETH_VLAN).u16((int) p.get(Field.VLAN));
        } else if (p.check == HeaderCheck.NOT_IP) {
            b.u16((int) eth);
            if (eth == 0x0806) {
                // ARP request: Ethernet/IPv4, who has 0.0.0.0
                b.u16(1).u16(0x0800).u8(6).u8(4).u16(1).mac(p.get(Field.ETH_SRC)).u32(0).mac(0).u32(0);
            } else {
                b.u8(0);  // no IP version nibble at byte 14
            }
            b.bytes(s.marker).bytes(p.payload);
            return b.done();
        }
        if (p.check == HeaderCheck.UNPARSEABLE) {
            // a valid header of the packet's family, broken as the shape says (zero fields: 0.0.0.0 / ::)
            Shape t = copy(s);
            if (t.broken == Break.NONE) {
                t.broken = Break.LONG_LENGTH;
            }
            b.u16((int) eth);
            ip(b, p, t);
            return b.done();
        }
        b.u16((int) eth);
        ip(b, p, s);
        return b.done();
    }

    private static Shape copy(Shape s) {
        Shape t = new Shape();
        t.ipOptions = s.ipOptions;
        t.dontFragment = s.dontFragment;
        t.ipv6ExtHeaders = s.ipv6ExtHeaders;
        t.ipId = s.ipId;
        t.fragmentOffset = s.fragmentOffset;
        t.badIpChecksum = s.badIpChecksum;
        t.badL4Checksum = s.badL4Checksum;
        t.udpNoChecksum = s.udpNoChecksum;
        t.broken = s.broken;
        t.marker = s.marker;
        return t;
    }

    /** Appends the IP datagram (header, extension headers, transport header, marker, payload). */
    private static void ip(Buf b, Packet p, Shape s) {
        boolean v6 = p.isIp6();
        int proto = (int) p.get(Field.IP_PROTO);
        boolean first = p.get(Field.IP_OFFSET) == 0;
        boolean mf = p.get(Field.IP_MF) == 1;
        byte[] data = concat(s.marker, p.payload);
        byte[] l4 = first ? transport(p, v6, proto, data, s) : new byte[0];
        int ipStart = b.len;
        if (!v6) {
            int hl = 20 + s.ipOptions;
            int total = hl + l4.length + data.length;
            int off = first ? 0 : s.fragmentOffset & 0x1fff;
            b.u8(s.broken == Break.SHORT_IHL ? 0x44 : 0x40 | hl / 4).u8((int) p.get(Field.TOS))
                    .u16(s.broken == Break.LONG_LENGTH ? total + 64 : total).u16(s.ipId & 0xffff)
                    .u16((s.dontFragment ? 0x4000 : 0) | (mf ? 0x2000 : 0) | off).u8((int) p.get(Field.TTL))
                    .u8(proto).u16(0).u32(p.get(Field.IP4_SRC)).u32(p.get(Field.IP4_DST));
            for (int i = 0; i < s.ipOptions; i++) {
                b.u8(i == s.ipOptions - 1 ? 0 : 1);
            }
            int c = Checksum.of(b.a, ipStart, hl, 0);
            b.put16(ipStart + 10, s.badIpChecksum ? c ^ 0x5a5a : c);
        } else {
            List<int[]> ext = new ArrayList<>();  // {type}
            if (s.ipv6ExtHeaders > 0) {
                ext.add(new int[] {HOP_BY_HOP});
            }
            if (s.ipv6ExtHeaders > 1) {
                ext.add(new int[] {DEST_OPTIONS});
            }
            boolean frag = mf || !first;
            int extLen = ext.size() * 8 + (frag ? 8 : 0);
            int plen = extLen + l4.length + data.length;
            int next = !ext.isEmpty() ? ext.get(0)[0] : frag ? FRAGMENT : proto;
            b.u32(6L << 28 | (p.get(Field.TOS) & 0xff) << 20).u16(s.broken == Break.LONG_LENGTH ? plen + 64 : plen)
                    .u8(next).u8((int) p.get(Field.TTL)).u64(p.get(Field.IP6_SRC_HI)).u64(p.get(Field.IP6_SRC_LO))
                    .u64(p.get(Field.IP6_DST_HI)).u64(p.get(Field.IP6_DST_LO));
            for (int i = 0; i < ext.size(); i++) {
                int nh = i + 1 < ext.size() ? ext.get(i + 1)[0] : frag ? FRAGMENT : proto;
                b.u8(nh).u8(0).u8(1).u8(4).u32(0);  // PadN of 4 bytes
            }
            if (frag) {
                b.u8(proto).u8(0).u16((first ? 0 : (s.fragmentOffset & 0x1fff) << 3) | (mf ? 1 : 0)).u32(s.ipId);
            }
        }
        int l4At = b.len;
        b.bytes(l4).bytes(data);
        if (first && l4.length > 0) {
            int csumAt = proto == 6 ? 16 : proto == 17 ? 6 : 2;
            boolean udpNone = proto == 17 && !v6 && s.udpNoChecksum;
            if (!udpNone) {
                boolean pseudo = proto == 6 || proto == 17 || v6;
                int c = Checksum.of(b.a, l4At, b.len - l4At, pseudo ? pseudo(b.a, ipStart, v6, proto,
                        b.len - l4At) : 0);
                if (proto == 17 && c == 0) {
                    c = 0xffff;
                }
                b.put16(l4At + csumAt, s.badL4Checksum ? c ^ 0x0f0f : c);
            }
        }
        if (s.broken == Break.CUT_HEADER) {
            b.len = ipStart + (v6 ? 30 : 12);
        }
    }

    private static byte[] transport(Packet p, boolean v6, int proto, byte[] data, Shape s) {
        Buf b = new Buf();
        if (proto == 6) {
            int flags = 0;
            for (Field f : Field.values()) {
                if (f.tcpFlagBit() != 0 && p.get(f) == 1) {
                    flags |= f.tcpFlagBit();
                }
            }
            // sequence and window bytes stay printable-free: no payload signature spans the header
            b.u16((int) p.get(Field.L4_SRC)).u16((int) p.get(Field.L4_DST)).u32(s.ipId & 0xffff).u32(0)
                    .u8(5 << 4).u8(flags).u16(8192).u16(0).u16(0);
        } else if (proto == 17) {
            b.u16((int) p.get(Field.L4_SRC)).u16((int) p.get(Field.L4_DST)).u16(8 + data.length).u16(0);
        } else if (proto == (v6 ? 58 : 1)) {
            b.u8((int) p.get(Field.ICMP_TYPE)).u8(0).u16(0).u32(s.ipId & 0xffff);
        }
        return b.done();
    }

    /** The pseudo-header's sum (addresses, protocol, length) for a transport checksum. */
    private static int pseudo(byte[] f, int ip, boolean v6, int proto, int len) {
        long sum = proto + len;
        int from = v6 ? ip + 8 : ip + 12;
        int words = v6 ? 16 : 4;
        for (int i = 0; i < words; i++) {
            sum += Bytes.get16(f, from + 2 * i);
        }
        return (int) sum;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** A growing big-endian byte buffer. */
    private static final class Buf {
        byte[] a = new byte[256];
        int len;

        private Buf room(int n) {
            if (len + n > a.length) {
                a = Arrays.copyOf(a, Math.max(a.length * 2, len + n));
            }
            return this;
        }

        Buf u8(int v) {
            room(1).a[len++] = (byte) v;
            return this;
        }

        Buf u16(int v) {
            return u8(v >> 8).u8(v);
        }

        Buf u32(long v) {
            return u16((int) (v >>> 16)).u16((int) v);
        }

        Buf u64(long v) {
            return u32(v >>> 32).u32(v);
        }

        Buf mac(long v) {
            return u16((int) (v >>> 32)).u32(v);
        }

        Buf bytes(byte[] b) {
            room(b.length);
            System.arraycopy(b, 0, a, len, b.length);
            len += b.length;
            return this;
        }

        void put16(int at, int v) {
            Bytes.put16raw(a, at, v);
        }

        byte[] done() {
            return Arrays.copyOf(a, len);
        }
    }
}
