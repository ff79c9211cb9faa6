package org.metron.synth.packet;

import org.metron.synth.hs.Field;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Ethernet frames and the model's packets, both ways. {@link #encode} writes a packet as a frame (with the
 * odd shapes of {@link Shape}: IPv4 options, IPv6 extension headers, VLAN tags, broken headers and checksums);
 * {@link #decode} reads a frame as Click's CheckIPHeader (Metron's: IPv4 and IPv6) and a switch read it
 * ({@link FrameRewrite} writes what a chain changed back into it).
 * <p>
 * A packet's payload is what follows its transport header (TCP data offset, UDP and ICMP 8 bytes) in first
 * fragments of TCP, UDP and ICMP, and what follows the IP header (and IPv6 extension headers) otherwise.
 * IPv6 extension headers (hop-by-hop, routing, destination options, fragment) are read through: the protocol
 * is the upper layer's; a fragment header gives the more-fragments and offset fields.
 */
public final class FrameCodec {
    public static final int ETH_VLAN = 0x8100;
    private static final int ETH_QINQ = 0x88a8;
    private static final int HOP_BY_HOP = 0;
    private static final int ROUTING = 43;
    private static final int FRAGMENT = 44;
    private static final int DEST_OPTIONS = 60;

    private FrameCodec() {
    }

    /** How a frame's IP header is broken (an {@link HeaderCheck#UNPARSEABLE} frame). */
    public enum Break {
        NONE,
        /** The frame ends inside the IP header. */
        CUT_HEADER,
        /** The IPv4 total length / IPv6 payload length claims 64 bytes more than the frame has. */
        LONG_LENGTH,
        /** IPv4 header length 4 words (less than the 5 of a header without options). */
        SHORT_IHL
    }

    /** The odd parts of a frame beyond its packet's fields. Mutable, filled by the generator. */
    public static final class Shape {
        /** Bytes of IPv4 options (NOPs then EOL), a multiple of 4 up to 40. */
        public int ipOptions;
        public boolean dontFragment;
        /** IPv6 extension headers before the upper layer: hop-by-hop, then destination options (0..2). */
        public int ipv6ExtHeaders;
        /** IPv4 identification / IPv6 fragment identification. */
        public int ipId;
        /** Fragment offset in 8-byte units when the packet's offset bit is set (1..8191). */
        public int fragmentOffset = 185;
        public boolean badIpChecksum;
        public boolean badL4Checksum;
        /** IPv4 UDP without a checksum (0). */
        public boolean udpNoChecksum;
        public Break broken = Break.NONE;
        /** Bytes written right before the packet's payload (the frame's identity in the checkers). */
        public byte[] marker = new byte[0];
    }

    /** Where a decoded frame's headers are. */
    public static final class Layout {
        /** Offset of the IP header (14, or 18 behind a VLAN tag); -1 if there is none the model reads. */
        public final int ip;
        /** 4 or 6; 0 without an IP header. */
        public final int version;
        /** End of the IP datagram (total length / 40 + payload length); bytes after it are padding. */
        public final int end;
        /** Offset of the transport header, -1 in non-first fragments and protocols without one. */
        public final int l4;
        /** Upper-layer protocol (after IPv6 extension headers). */
        public final int proto;
        /** True for an IPv6 packet with extension headers (hop-by-hop, routing, destination options, fragment). */
        public final boolean ipv6Extensions;

        Layout(int ip, int version, int end, int l4, int proto) {
            this(ip, version, end, l4, proto, false);
        }

        Layout(int ip, int version, int end, int l4, int proto, boolean ipv6Extensions) {
            this.ip = ip;
            this.version = version;
            this.end = end;
            this.l4 = l4;
            this.proto = proto;
            this.ipv6Extensions = ipv6Extensions;
        }

        /**
         * Offset of the TCP/UDP checksum that rewriting updates, or -1: no transport header, one too short for it
         * (Click updates TCP's only from 18 bytes on), or a UDP datagram without checksum (0 stays 0).
         */
        int l4Checksum(byte[] f) {
            if (l4 < 0) {
                return -1;
            }
            if (proto == 6 && end - l4 >= 18) {
                return l4 + 16;
            }
            if (proto == 17 && end - l4 >= 8 && get16(f, l4 + 6) != 0) {
                return l4 + 6;
            }
            return -1;
        }
    }

    /** A frame as the model reads it. */
    public static final class Decoded {
        public final Packet packet;
        public final Layout layout;

        public Decoded(Packet packet, Layout layout) {
            this.packet = packet;
            this.layout = layout;
        }
    }

    // ---- encode --------------------------------------------------------------------------------------------

    /** The frame of a packet in a shape; the packet must be well-formed for its {@link HeaderCheck}. */
    public static byte[] encode(Packet p, Shape s) {
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
            sum += get16(f, from + 2 * i);
        }
        return (int) sum;
    }

    // ---- decode --------------------------------------------------------------------------------------------

    /**
     * The packet a frame is, with its {@link HeaderCheck}, and where its headers are.
     *
     * @throws OutsideModelException for frames the model has no reading of (a transport header cut short,
     *                               truncated IPv6 extension headers, a priority-tagged frame, an IP header at
     *                               byte 14 behind another EtherType, ...)
     */
    public static Decoded decode(byte[] f) {
        if (f.length < 14) {
            throw new OutsideModelException("frame of " + f.length + " bytes");
        }
        long[] v = new long[Field.COUNT];
        v[Field.ETH_DST.ordinal()] = get48(f, 0);
        v[Field.ETH_SRC.ordinal()] = get48(f, 6);
        int type = get16(f, 12);
        HeaderCheck atByte14 = clickCheck(f, 14);
        boolean tagged = type == ETH_VLAN || type == ETH_QINQ;
        if (tagged || type != Field.ETH_IP4 && type != Field.ETH_IP6) {
            if (atByte14 != HeaderCheck.UNPARSEABLE) {
                throw new OutsideModelException(String.format("IP header at byte 14 behind EtherType 0x%04x", type));
            }
            if (!tagged) {
                v[Field.ETH_TYPE.ordinal()] = type;
                return new Decoded(new Packet(v, Arrays.copyOfRange(f, 14, f.length), HeaderCheck.NOT_IP),
                        new Layout(-1, 0, f.length, -1, -1));
            }
            if (f.length < 18 || (get16(f, 14) & 0xfff) == 0) {
                throw new OutsideModelException("priority-tagged or cut VLAN header");
            }
            v[Field.VLAN.ordinal()] = get16(f, 14) & 0xfff;
            int inner = get16(f, 16);
            v[Field.ETH_TYPE.ordinal()] = inner;
            // the tagged packet's fields, as a switch reads them (CheckIPHeader reads the tag at byte 14)
            HeaderCheck in18 = inner == Field.ETH_IP4 || inner == Field.ETH_IP6 ? clickCheck(f, 18)
                    : HeaderCheck.UNPARSEABLE;
            if (in18 == HeaderCheck.UNPARSEABLE) {
                return new Decoded(new Packet(v, new byte[0], HeaderCheck.NOT_IP), new Layout(-1, 0, f.length, -1, -1));
            }
            Decoded d = fields(f, 18, v);
            return new Decoded(new Packet(d.packet.v, d.packet.payload, HeaderCheck.NOT_IP), d.layout);
        }
        v[Field.ETH_TYPE.ordinal()] = type;
        if (atByte14 == HeaderCheck.UNPARSEABLE) {
            return new Decoded(new Packet(v, new byte[0], HeaderCheck.UNPARSEABLE), new Layout(-1, 0, f.length, -1, -1));
        }
        if ((f[14] >> 4 & 0xf) != (type == Field.ETH_IP4 ? 4 : 6)) {
            throw new OutsideModelException(String.format("IPv%d header behind EtherType 0x%04x", f[14] >> 4 & 0xf,
                    type));
        }
        Decoded d = fields(f, 14, v);
        return atByte14 == HeaderCheck.VALID ? d
                : new Decoded(new Packet(d.packet.v, d.packet.payload, atByte14), d.layout);
    }

    /** What Metron's CheckIPHeader makes of the bytes at {@code off} (VALID, BAD_CHECKSUM or UNPARSEABLE). */
    static HeaderCheck clickCheck(byte[] f, int off) {
        int len = f.length - off;
        if (len < 20) {
            return HeaderCheck.UNPARSEABLE;
        }
        int ver = f[off] >> 4 & 0xf;
        if (ver == 4) {
            int hl = (f[off] & 0xf) * 4;
            int tot = get16(f, off + 2);
            if (hl < 20 || tot < hl || tot > len) {
                return HeaderCheck.UNPARSEABLE;
            }
            return verify(f, off, hl);
        }
        if (ver == 6) {
            return len < 40 || 40 + get16(f, off + 4) > len ? HeaderCheck.UNPARSEABLE : HeaderCheck.VALID;
        }
        return HeaderCheck.UNPARSEABLE;
    }

    /** VALID if the IPv4 header's checksum verifies (its ones' complement sum is all ones). */
    private static HeaderCheck verify(byte[] f, int off, int hl) {
        long sum = 0;
        for (int i = 0; i < hl; i += 2) {
            sum += get16(f, off + i);
        }
        while (sum >> 16 != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return sum == 0xffff ? HeaderCheck.VALID : HeaderCheck.BAD_CHECKSUM;
    }

    /** Reads the IP header at {@code ip} (which CheckIPHeader accepts, maybe but for its checksum). */
    private static Decoded fields(byte[] f, int ip, long[] v) {
        int ver = f[ip] >> 4 & 0xf;
        int proto;
        int next;
        int end;
        boolean first;
        if (ver == 4) {
            v[Field.ETH_TYPE.ordinal()] = Field.ETH_IP4;
            int hl = (f[ip] & 0xf) * 4;
            end = ip + get16(f, ip + 2);
            v[Field.TOS.ordinal()] = f[ip + 1] & 0xff;
            v[Field.TTL.ordinal()] = f[ip + 8] & 0xff;
            proto = f[ip + 9] & 0xff;
            int frag = get16(f, ip + 6);
            v[Field.IP_MF.ordinal()] = (frag & 0x2000) != 0 ? 1 : 0;
            first = (frag & 0x1fff) == 0;
            v[Field.IP4_SRC.ordinal()] = get32(f, ip + 12);
            v[Field.IP4_DST.ordinal()] = get32(f, ip + 16);
            next = ip + hl;
        } else {
            v[Field.ETH_TYPE.ordinal()] = Field.ETH_IP6;
            end = ip + 40 + get16(f, ip + 4);
            v[Field.TOS.ordinal()] = get16(f, ip) >> 4 & 0xff;
            v[Field.TTL.ordinal()] = f[ip + 7] & 0xff;
            v[Field.IP6_SRC_HI.ordinal()] = get64(f, ip + 8);
            v[Field.IP6_SRC_LO.ordinal()] = get64(f, ip + 16);
            v[Field.IP6_DST_HI.ordinal()] = get64(f, ip + 24);
            v[Field.IP6_DST_LO.ordinal()] = get64(f, ip + 32);
            proto = f[ip + 6] & 0xff;
            next = ip + 40;
            first = true;
            while (proto == HOP_BY_HOP || proto == ROUTING || proto == DEST_OPTIONS || proto == FRAGMENT) {
                if (next + 8 > end) {
                    throw new OutsideModelException("IPv6 extension header cut short");
                }
                if (proto == FRAGMENT) {
                    int w = get16(f, next + 2);
                    first = (w & 0xfff8) == 0;
                    v[Field.IP_MF.ordinal()] = w & 1;
                    proto = f[next] & 0xff;
                    next += 8;
                } else {
                    int len = ((f[next + 1] & 0xff) + 1) * 8;
                    proto = f[next] & 0xff;
                    next += len;
                }
            }
        }
        v[Field.IP_PROTO.ordinal()] = proto;
        v[Field.IP_OFFSET.ordinal()] = first ? 0 : 1;
        int l4 = -1;
        int data = next;
        boolean icmp = proto == (ver == 6 ? 58 : 1);
        if (first && (proto == 6 || proto == 17 || icmp)) {
            int need = proto == 6 ? 20 : 8;
            if (next + need > end) {
                throw new OutsideModelException("transport header cut short");
            }
            l4 = next;
            if (proto == 6) {
                v[Field.L4_SRC.ordinal()] = get16(f, l4);
                v[Field.L4_DST.ordinal()] = get16(f, l4 + 2);
                int flags = f[l4 + 13] & 0x3f;
                for (Field fd : Field.values()) {
                    if (fd.tcpFlagBit() != 0) {
                        v[fd.ordinal()] = (flags & fd.tcpFlagBit()) != 0 ? 1 : 0;
                    }
                }
                data = l4 + Math.max(20, (f[l4 + 12] >> 4 & 0xf) * 4);
            } else if (proto == 17) {
                v[Field.L4_SRC.ordinal()] = get16(f, l4);
                v[Field.L4_DST.ordinal()] = get16(f, l4 + 2);
                data = l4 + 8;
            } else {
                v[Field.ICMP_TYPE.ordinal()] = f[l4] & 0xff;
                data = l4 + 8;
            }
        }
        byte[] payload = Arrays.copyOfRange(f, Math.min(data, end), end);
        boolean ext = ver == 6 && (f[ip + 6] & 0xff) != proto;
        return new Decoded(new Packet(v, payload, HeaderCheck.VALID), new Layout(ip, ver, end, l4, proto, ext));
    }

    // ---- bytes ---------------------------------------------------------------------------------------------

    static int get16(byte[] f, int at) {
        return (f[at] & 0xff) << 8 | f[at + 1] & 0xff;
    }

    static long get32(byte[] f, int at) {
        return (long) get16(f, at) << 16 | get16(f, at + 2);
    }

    static long get48(byte[] f, int at) {
        return (long) get16(f, at) << 32 | get32(f, at + 2);
    }

    static long get64(byte[] f, int at) {
        return get32(f, at) << 32 | get32(f, at + 4);
    }

    static void put16raw(byte[] f, int at, int v) {
        f[at] = (byte) (v >> 8);
        f[at + 1] = (byte) v;
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
            put16raw(a, at, v);
        }

        byte[] done() {
            return Arrays.copyOf(a, len);
        }
    }
}
