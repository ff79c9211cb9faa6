package org.metron.synth.check;

import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.Packet;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded packets aimed at the chain's decision boundaries: most are drawn inside a random filter entry with
 * interval end points favoured, then nudged across one boundary; the rest are random with each field taken
 * from the global boundary set (every end point of every prefix/range in the configs, and its neighbours).
 * Packets are well-formed for the model (absent fields zero); fragments (first ones with their transport
 * header, later ones without) come from the more-fragments and offset fields. One in {@link #ODD_FRAMES} is a
 * frame Click's CheckIPHeader rejects ({@link HeaderCheck}: unparseable IP header, another EtherType, a VLAN
 * tag), with the fields a switch reads from it.
 */
public final class PacketGenerator {
    /** One packet in this many is a frame without a valid IP header at byte 14. */
    static final int ODD_FRAMES = 40;
    /** EtherTypes of the non-IP frames: ARP, LLDP, a local experimental one. */
    private static final long[] OTHER_ETHERTYPES = {0x0806, 0x88cc, 0x88b5};

    private final SplittableRandom rnd;
    private final List<Cube> cubes;
    private final long[][] boundaries = new long[Field.COUNT][];
    private final List<byte[]> snippets;

    /**
     * @param seed     random seed
     * @param cubes    filter entries of the synthesized chain (their sets carry every config boundary)
     * @param snippets payload strings worth planting (DPI literals)
     */
    public PacketGenerator(long seed, List<Cube> cubes, List<String> snippets) {
        this.rnd = new SplittableRandom(seed);
        this.cubes = cubes;
        this.snippets = snippets.stream().map(s -> s.getBytes(StandardCharsets.ISO_8859_1))
                .collect(java.util.stream.Collectors.toList());
        for (Field f : Field.values()) {
            long[] acc = new long[64];
            int n = 0;
            for (Cube c : cubes) {
                long[] s = c.get(f);
                if (s == null) {
                    continue;
                }
                for (int i = 0; i < s.length && n < 1 << 20; i += 2) {
                    if (n + 4 > acc.length) {
                        acc = Arrays.copyOf(acc, acc.length * 2);
                    }
                    acc[n++] = s[i];
                    acc[n++] = s[i + 1];
                    acc[n++] = s[i] == 0 ? 0 : s[i] - 1;
                    acc[n++] = s[i + 1] == f.max() ? s[i + 1] : s[i + 1] + 1;
                }
            }
            long[] b = Arrays.copyOf(acc, n);
            Arrays.sort(b);
            boundaries[f.ordinal()] = Arrays.stream(b).distinct().toArray();
        }
    }

    /** The next packet. */
    public Packet next() {
        long[] v = new long[Field.COUNT];
        for (Field f : Field.values()) {
            v[f.ordinal()] = random(f);
        }
        int mode = rnd.nextInt(10);
        if (mode < 6 && !cubes.isEmpty()) {
            Cube c = cubes.get(rnd.nextInt(cubes.size()));
            for (Field f : c.fields()) {
                long[] s = c.get(f);
                int i = 2 * rnd.nextInt(s.length / 2);
                int pick = rnd.nextInt(4);
                v[f.ordinal()] = pick == 0 ? s[i] : pick == 1 ? s[i + 1] : between(s[i], s[i + 1]);
            }
            if (rnd.nextInt(3) == 0) {
                List<Field> fs = c.fields();
                if (!fs.isEmpty()) {
                    Field f = fs.get(rnd.nextInt(fs.size()));
                    long[] b = boundaries[f.ordinal()];
                    v[f.ordinal()] = b[rnd.nextInt(b.length)];
                }
            }
        } else {
            for (Field f : Field.values()) {
                long[] b = boundaries[f.ordinal()];
                if (b.length > 0 && rnd.nextBoolean()) {
                    v[f.ordinal()] = b[rnd.nextInt(b.length)];
                }
            }
        }
        if (rnd.nextInt(ODD_FRAMES) == 0) {
            return odd(v);
        }
        return wellFormed(v, payload());
    }

    /** A frame CheckIPHeader rejects, as a switch reads it, from the fields of a packet just drawn. */
    private Packet odd(long[] v) {
        switch (rnd.nextInt(3)) {
            case 0:
                return wellFormed(v, payload(), HeaderCheck.UNPARSEABLE);
            case 1:
                v[Field.ETH_TYPE.ordinal()] = OTHER_ETHERTYPES[rnd.nextInt(OTHER_ETHERTYPES.length)];
                v[Field.VLAN.ordinal()] = 0;
                return wellFormed(v, payload(), HeaderCheck.NOT_IP);
            default:
                v[Field.VLAN.ordinal()] = 1 + rnd.nextInt(4095);
                return wellFormed(v, payload(), HeaderCheck.NOT_IP);
        }
    }

    /** A random int in [0, bound) from this generator's stream. */
    public int nextInt(int bound) {
        return rnd.nextInt(bound);
    }

    /** The packet with the fields a reply's sender chooses freely redrawn (TTL, TOS, TCP flags, payload). */
    public Packet freshen(Packet p) {
        long[] v = p.v.clone();
        for (Field f : Field.values()) {
            if (f == Field.TTL || f == Field.TOS || f.tcpFlagBit() != 0) {
                v[f.ordinal()] = random(f);
            }
        }
        return wellFormed(v, payload(), p.check);
    }

    /** The packet with one field moved to one of the boundaries of this generator's entries. */
    public Packet nudge(Packet p) {
        long[] v = p.v.clone();
        Field f = Field.values()[rnd.nextInt(Field.COUNT)];
        long[] b = boundaries[f.ordinal()];
        v[f.ordinal()] = b.length > 0 ? b[rnd.nextInt(b.length)] : random(f);
        return wellFormed(v, p.payload, p.check);
    }

    /**
     * A value of f picked by {@code h} alone (not this generator's random state): half the time one of the
     * boundaries of its entries, else any value of the field. For what a black box writes, the same on both
     * sides of the checker.
     */
    long pick(Field f, long h) {
        long[] b = boundaries[f.ordinal()];
        if (b.length > 0 && (h & 1) == 0) {
            return b[(int) Long.remainderUnsigned(h >>> 1, b.length)];
        }
        long x = h >>> 1 | h << 63;
        return f.width() == 64 ? x : x & f.max();
    }

    private long between(long lo, long hi) {
        if (lo == hi) {
            return lo;
        }
        long span = hi - lo;
        if (span < 0 || span == -1L) {
            return lo + (rnd.nextLong() & Long.MAX_VALUE);
        }
        return lo + Math.floorMod(rnd.nextLong(), span + 1);
    }

    private long random(Field f) {
        switch (f) {
            case ETH_TYPE:
                return rnd.nextBoolean() ? Field.ETH_IP4 : Field.ETH_IP6;
            case IP_PROTO: {
                int[] common = {6, 6, 6, 17, 17, 17, 1, 58, 47, 132};
                return rnd.nextInt(5) == 0 ? rnd.nextInt(256) : common[rnd.nextInt(common.length)];
            }
            case VLAN:
                return 0;
            case IP_MF:
                // one in ten packets is a first or middle fragment: switches read their ports differently
                return rnd.nextInt(10) == 0 ? 1 : 0;
            case IP_OFFSET:
                return rnd.nextInt(20) == 0 ? 1 : 0;
            case TTL:
                return rnd.nextInt(8) == 0 ? rnd.nextInt(3) : 1 + rnd.nextInt(255);
            default:
                return f.width() == 64 ? rnd.nextLong() : rnd.nextLong() & f.max();
        }
    }

    /** A random payload (printable bytes, sometimes with a DPI literal planted). */
    byte[] payload() {
        int n = rnd.nextInt(48);
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (32 + rnd.nextInt(95));
        }
        if (!snippets.isEmpty() && rnd.nextInt(4) == 0) {
            byte[] s = snippets.get(rnd.nextInt(snippets.size()));
            byte[] q = new byte[n + s.length];
            int at = n == 0 ? 0 : rnd.nextInt(n + 1);
            System.arraycopy(p, 0, q, 0, at);
            System.arraycopy(s, 0, q, at, s.length);
            System.arraycopy(p, at, q, at + s.length, n - at);
            return q;
        }
        return p;
    }

    /** A valid packet: {@link #wellFormed(long[], byte[], HeaderCheck)} with {@link HeaderCheck#VALID}. */
    public static Packet wellFormed(long[] v, byte[] payload) {
        return wellFormed(v, payload, HeaderCheck.VALID);
    }

    /**
     * Zeroes fields the packet cannot have (other family's addresses, L4 of non-TCP/UDP and of non-first
     * fragments, ...); for frames CheckIPHeader rejects, the fields a switch cannot read from them: every IP
     * field of an unparseable header, of a non-IP EtherType (a tagged frame keeps the tagged packet's).
     */
    public static Packet wellFormed(long[] v, byte[] payload, HeaderCheck check) {
        long eth = v[Field.ETH_TYPE.ordinal()];
        boolean ipType = eth == Field.ETH_IP4 || eth == Field.ETH_IP6;
        boolean tagged = check == HeaderCheck.NOT_IP && v[Field.VLAN.ordinal()] != 0;
        if (check == HeaderCheck.UNPARSEABLE || check == HeaderCheck.NOT_IP && !tagged) {
            if (check == HeaderCheck.UNPARSEABLE && !ipType) {
                v[Field.ETH_TYPE.ordinal()] = Field.ETH_IP4;
            } else if (check == HeaderCheck.NOT_IP && ipType) {
                v[Field.ETH_TYPE.ordinal()] = OTHER_ETHERTYPES[0];
            }
            for (Field f : Field.values()) {
                if (f != Field.ETH_SRC && f != Field.ETH_DST && f != Field.ETH_TYPE) {
                    v[f.ordinal()] = 0;
                }
            }
            return new Packet(v, payload, check);
        }
        boolean v6 = eth == Field.ETH_IP6;
        if (!v6) {
            v[Field.ETH_TYPE.ordinal()] = Field.ETH_IP4;
        }
        if (!tagged) {
            v[Field.VLAN.ordinal()] = 0;
        }
        Field[] other = v6 ? new Field[] {Field.IP4_SRC, Field.IP4_DST}
                : new Field[] {Field.IP6_SRC_HI, Field.IP6_SRC_LO, Field.IP6_DST_HI, Field.IP6_DST_LO};
        for (Field f : other) {
            v[f.ordinal()] = 0;
        }
        long proto = v[Field.IP_PROTO.ordinal()];
        if (v6 && (proto == 44 || proto == 0 || proto == 43 || proto == 60)) {
            // IPv6 extension headers are read through (fragment header: the more-fragments and offset fields):
            // the protocol is the upper layer's
            v[Field.IP_PROTO.ordinal()] = proto = 6;
        }
        boolean l4 = v[Field.IP_OFFSET.ordinal()] == 0;
        if (!(l4 && (proto == 6 || proto == 17))) {
            v[Field.L4_SRC.ordinal()] = 0;
            v[Field.L4_DST.ordinal()] = 0;
        }
        if (!(l4 && proto == 6)) {
            for (Field f : Field.values()) {
                if (f.tcpFlagBit() != 0) {
                    v[f.ordinal()] = 0;
                }
            }
        }
        if (!(l4 && proto == (v6 ? 58 : 1))) {
            v[Field.ICMP_TYPE.ordinal()] = 0;
        }
        return new Packet(v, payload, check);
    }
}
