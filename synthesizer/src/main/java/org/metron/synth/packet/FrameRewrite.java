package org.metron.synth.packet;

import org.metron.synth.hs.Field;

import java.util.Arrays;
import java.util.List;

/**
 * What a chain changed, written into a copy of its input frame with Click's incremental checksum updates (RFC
 * 1624, as IPRewriter, DecIPTTL and Open vSwitch's set-field and dec_ttl do), and the fields of such a frame a
 * chain picks at run time ({@link Free}: allocated ports), with the checksums that cover them.
 */
public final class FrameRewrite {
    private FrameRewrite() {
    }

    /** A field of an output frame whose value the chain picks at run time (an allocated port). */
    public static final class Free {
        public final int offset;
        public final int bytes;
        public final long lo;
        public final long hi;
        /** Offsets of the checksums that cover it (IPv4 header, transport). */
        public final int[] checksums;
        /** The one of them that is a UDP checksum, or -1. */
        public final int udpChecksum;

        public Free(int offset, int bytes, long lo, long hi, int[] checksums, int udpChecksum) {
            this.offset = offset;
            this.bytes = bytes;
            this.lo = lo;
            this.hi = hi;
            this.checksums = checksums;
            this.udpChecksum = udpChecksum;
        }
    }

    /**
     * The frame a chain sends for an input frame: a copy up to the end of the IP datagram (padding is not part
     * of the packet), with every field of {@code out} that differs from {@code in} written and the checksums
     * covering it updated incrementally; the destination MAC is {@code dstMac} (the egress host's, which the
     * last switch writes: docs/contracts.md#egress) when given.
     *
     * @throws OutsideModelException if the chain wrote what this does not write into frames (a VLAN tag)
     */
    public static byte[] rewrite(byte[] f, FrameCodec.Decoded d, Packet out, Long dstMac) {
        Packet in = d.packet;
        FrameCodec.Layout l = d.layout;
        if (in.get(Field.VLAN) != out.get(Field.VLAN)) {
            throw new OutsideModelException("the chain writes a VLAN tag");
        }
        byte[] o = Arrays.copyOf(f, l.ip < 0 ? f.length : l.end);
        if (dstMac != null) {
            put48(o, 0, dstMac);
        } else if (in.get(Field.ETH_DST) != out.get(Field.ETH_DST)) {
            put48(o, 0, out.get(Field.ETH_DST));
        }
        if (in.get(Field.ETH_SRC) != out.get(Field.ETH_SRC)) {
            put48(o, 6, out.get(Field.ETH_SRC));
        }
        if (l.ip < 0) {
            return o;
        }
        int ip = l.ip;
        int ipSum = l.version == 4 ? ip + 10 : -1;
        int l4Sum = l.l4Checksum(o);
        if (l.version == 4) {
            put8(o, ip + 1, out.get(Field.TOS), ipSum, -1);
            put8(o, ip + 8, out.get(Field.TTL), ipSum, -1);
            put16(o, ip + 12, out.get(Field.IP4_SRC) >>> 16, ipSum, l4Sum);
            put16(o, ip + 14, out.get(Field.IP4_SRC) & 0xffff, ipSum, l4Sum);
            put16(o, ip + 16, out.get(Field.IP4_DST) >>> 16, ipSum, l4Sum);
            put16(o, ip + 18, out.get(Field.IP4_DST) & 0xffff, ipSum, l4Sum);
        } else {
            int w = Bytes.get16(o, ip);
            o[ip] = (byte) (0x60 | (int) (out.get(Field.TOS) >> 4 & 0xf));
            o[ip + 1] = (byte) ((out.get(Field.TOS) & 0xf) << 4 | (w & 0xf));
            o[ip + 7] = (byte) out.get(Field.TTL);
            Field[] addr = {Field.IP6_SRC_HI, Field.IP6_SRC_LO, Field.IP6_DST_HI, Field.IP6_DST_LO};
            for (int k = 0; k < 4; k++) {
                for (int j = 0; j < 4; j++) {
                    put16(o, ip + 8 + 8 * k + 2 * j, out.get(addr[k]) >>> (48 - 16 * j) & 0xffff, -1, l4Sum);
                }
            }
        }
        if (l.l4 >= 0 && (l.proto == 6 || l.proto == 17)) {
            put16(o, l.l4, out.get(Field.L4_SRC), -1, l4Sum);
            put16(o, l.l4 + 2, out.get(Field.L4_DST), -1, l4Sum);
        }
        udpNonZero(o, l.proto == 17 ? l4Sum : -1);
        return o;
    }

    /**
     * A UDP checksum that updates to 0 is sent as 0xffff (RFC 768: 0 means "no checksum"), as OVS, Linux and the
     * agent do; Click's IPRewriter would leave the 0, a rare encoding slip the reference does not copy.
     */
    private static void udpNonZero(byte[] o, int udpSum) {
        if (udpSum >= 0 && Bytes.get16(o, udpSum) == 0) {
            Bytes.put16raw(o, udpSum, 0xffff);
        }
    }

    /**
     * Where the output frame of input frame {@code f} holds a field a chain allocates per flow, or null if the
     * frame has no such field.
     */
    public static Free free(byte[] f, FrameCodec.Decoded d, Field field, long lo, long hi) {
        FrameCodec.Layout l = d.layout;
        int ipSum = l.version == 4 ? l.ip + 10 : -1;
        int l4Sum = l.l4Checksum(f);
        int udp = l.proto == 17 ? l4Sum : -1;
        switch (field) {
            case L4_SRC:
            case L4_DST:
                if (l.l4 < 0 || l.proto != 6 && l.proto != 17) {
                    return null;
                }
                return new Free(l.l4 + (field == Field.L4_SRC ? 0 : 2), 2, lo, hi, sums(l4Sum), udp);
            case IP4_SRC:
            case IP4_DST:
                return l.version != 4 ? null
                        : new Free(l.ip + (field == Field.IP4_SRC ? 12 : 16), 4, lo, hi, sums(ipSum, l4Sum), udp);
            default:
                throw new OutsideModelException("allocated " + field + " in an output frame");
        }
    }

    private static int[] sums(int... at) {
        return Arrays.stream(at).filter(x -> x >= 0).toArray();
    }

    /**
     * The output frame {@code expected} with the free fields set to {@code observed}'s values and the checksums
     * covering them updated for the change (what the chain sends had it picked those values).
     */
    public static byte[] adopt(byte[] expected, byte[] observed, List<Free> free) {
        byte[] e = expected.clone();
        for (Free fr : free) {
            if (fr.offset + fr.bytes > Math.min(observed.length, e.length)) {
                return e;
            }
            for (int k = 0; k < fr.bytes; k += 2) {
                int was = Bytes.get16(e, fr.offset + k);
                int now = Bytes.get16(observed, fr.offset + k);
                Bytes.put16raw(e, fr.offset + k, now);
                for (int sum : fr.checksums) {
                    if (was != now) {
                        Bytes.put16raw(e, sum, Checksum.update(Bytes.get16(e, sum), was, now));
                    }
                }
            }
            udpNonZero(e, fr.udpChecksum);
        }
        return e;
    }

    /** The value of a free field in a frame. */
    public static long valueAt(byte[] f, Free fr) {
        long v = 0;
        for (int k = 0; k < fr.bytes; k++) {
            v = v << 8 | (f[fr.offset + k] & 0xff);
        }
        return v;
    }

    private static void put8(byte[] o, int at, long value, int sum1, int sum2) {
        int word = at & ~1;
        int was = Bytes.get16(o, word);
        o[at] = (byte) value;
        updateSums(o, was, Bytes.get16(o, word), sum1, sum2);
    }

    private static void put16(byte[] o, int at, long value, int sum1, int sum2) {
        int was = Bytes.get16(o, at);
        Bytes.put16raw(o, at, (int) value);
        updateSums(o, was, (int) value & 0xffff, sum1, sum2);
    }

    private static void updateSums(byte[] o, int was, int now, int sum1, int sum2) {
        if (was == now) {
            return;
        }
        for (int s : new int[] {sum1, sum2}) {
            if (s >= 0) {
                Bytes.put16raw(o, s, Checksum.update(Bytes.get16(o, s), was, now));
            }
        }
    }

    private static void put48(byte[] f, int at, long v) {
        for (int i = 0; i < 6; i++) {
            f[at + i] = (byte) (v >>> (40 - 8 * i));
        }
    }

}
