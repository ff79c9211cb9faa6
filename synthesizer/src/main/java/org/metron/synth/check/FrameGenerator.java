package org.metron.synth.check;

import org.metron.synth.ChainSpec;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.Synthesis;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.FrameCodec;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Frames for checking a deployed chain on a real data plane: the {@link PacketGenerator}'s packets (aimed at the
 * chain's rule boundaries) written as frames, every other one of a {@link Kind} switches treat specially, in
 * turn, so any run of 2 x {@code Kind.values().length} frames holds each kind. Every frame carries a
 * {@link #MAGIC} marker, its kind, its number and a check byte in front of its payload, which identifies it
 * wherever it arrives, whatever the chain rewrote in its headers. The check byte is there because random headers
 * spell the magic now and then (in 10^6 frames, one had it across its two MAC addresses, so it read as another
 * frame): an occurrence counts only when its check byte matches.
 * <p>
 * A long trace comes in windows of consecutive frames ({@link #windowFrames}): SAME_FLOW frames and fragments of
 * known flows repeat flows of their own window only, so a replay whose windows each last well within the chain's
 * shortest idle timeout keeps every flow's state within a window (other frames may repeat a tuple by chance in
 * a later window, where the data plane may map it anew: the comparison checks one mapping per flow per window).
 */
public final class FrameGenerator {
    /** What is special about a frame. */
    public enum Kind {
        PLAIN,
        /** Another packet of an earlier flow (same addresses, protocol and ports): it must meet the same state. */
        SAME_FLOW,
        FIRST_FRAGMENT,
        MIDDLE_FRAGMENT,
        LAST_FRAGMENT,
        DONT_FRAGMENT,
        IP_OPTIONS,
        TTL_0,
        TTL_1,
        BROADCAST,
        MULTICAST,
        IPV6_EXTENSION_HEADERS,
        IPV6_FRAGMENT,
        VLAN_TAGGED,
        ARP,
        OTHER_ETHERTYPE,
        CUT_IP_HEADER,
        LONG_IP_LENGTH,
        SHORT_IP_HEADER_LENGTH,
        BAD_IP_CHECKSUM,
        BAD_L4_CHECKSUM,
        UDP_WITHOUT_CHECKSUM,
        /** A reply to a forward frame the chain delivered: its egress headers mirrored (it finds the mapping). */
        REPLY,
        /** A reply aimed at the chain's reply entries that no forward frame's mapping answers. */
        UNMAPPED_REPLY
    }

    /** The kinds forward frames take in turn (after PLAIN, before the reply kinds). */
    private static final Kind[] SPECIAL = java.util.Arrays.copyOfRange(Kind.values(), 1, Kind.REPLY.ordinal());
    /** Numbers of reply frames start here (their forward frame's number is added for {@link Kind#REPLY}). */
    public static final int REPLY_BASE = 1 << 30;
    private static final int UNMAPPED_BASE = REPLY_BASE + (1 << 29);

    /**
     * Marker bytes in front of every generated payload (then the kind's ordinal, the frame number and
     * {@link #check}).
     */
    public static final byte[] MAGIC = {(byte) 0xa5, 'm', 'Q'};
    static final int MARKER_BYTES = 9;
    /** Earlier flows remembered for {@link Kind#SAME_FLOW} and fragments of known flows. */
    private static final int FLOWS = 64;

    /** One generated frame. */
    public static final class Frame {
        public final int id;
        public final Kind kind;
        public final byte[] bytes;

        Frame(int id, Kind kind, byte[] bytes) {
            this.id = id;
            this.kind = kind;
            this.bytes = bytes;
        }
    }

    private final PacketGenerator gen;
    /** Packets aimed at the reply entries; null without a reply ingress. */
    private final PacketGenerator replyGen;
    private final SplittableRandom rnd;
    /** Frames per window; 0: the whole trace is one. */
    private final int window;
    private final List<Packet> flows = new ArrayList<>();
    private int next;
    private int unmapped;

    public FrameGenerator(ChainSpec chain, long seed) {
        this(chain, seed, 0);
    }

    /** @param window frames per window (0: one window) */
    public FrameGenerator(ChainSpec chain, long seed, int window) {
        this.window = window;
        ChainModel model = new ChainModel(chain);
        Synthesis syn = Synthesis.of(model);
        this.gen = new PacketGenerator(seed, syn.entries, EquivalenceChecker.dpiLiterals(chain));
        this.replyGen = model.ingresses() > 1 ? new PacketGenerator(seed ^ 0x7e91, syn.reply.cubes, List.of()) : null;
        this.rnd = new SplittableRandom(seed ^ 0xf7a3e);
    }

    /**
     * Frames per window for a replay at {@code pps} frames/s: each window lasts a third of the chain's shortest
     * idle timeout ({@link ChainModel#shortestIdleTimeout}); 0 when {@code frames} fit in one.
     */
    public static int windowFrames(ChainSpec chain, long frames, double pps) {
        double w = Math.floor(new ChainModel(chain).shortestIdleTimeout() / 3 * pps);
        if (w >= frames) {
            return 0;
        }
        if (w < 2 * SPECIAL.length + 2) {
            throw new IllegalArgumentException("a window of a third of the chain's shortest idle timeout holds only "
                    + (long) w + " frames at " + pps + " frames/s, fewer than one of every kind");
        }
        return (int) w;
    }

    /** The next frame: odd-numbered ones are of the special kinds in turn. */
    public Frame next() {
        int id = next++;
        if (window > 0 && id % window == 0) {
            flows.clear();  // a new window: no flow of the previous one comes back
        }
        Kind kind = id % 2 == 0 ? Kind.PLAIN : SPECIAL[(id / 2) % SPECIAL.length];
        FrameCodec.Shape s = new FrameCodec.Shape();
        s.ipId = id;
        s.marker = marker(id, kind);
        Packet p = packet(kind, s);
        if (p.check == HeaderCheck.VALID && (p.get(Field.IP_PROTO) == 6 || p.get(Field.IP_PROTO) == 17)
                && p.get(Field.IP_OFFSET) == 0) {
            if (flows.size() == FLOWS) {
                flows.set(rnd.nextInt(FLOWS), p);
            } else {
                flows.add(p);
            }
        }
        return new Frame(id, kind, FrameCodec.encode(p, s));
    }

    /**
     * A reply to forward frame {@code forwardId}, which arrived as {@code seen}: its addresses and ports swapped,
     * sent by the receiving host (source MAC the one it was addressed to); TTL, TOS, TCP flags and payload
     * drawn afresh; unfragmented.
     */
    public Frame reply(int forwardId, byte[] seen) {
        Packet p = FrameCodec.decode(seen).packet;
        long[] v = p.v.clone();
        swap(v, Field.ETH_SRC, Field.ETH_DST);
        swap(v, Field.IP4_SRC, Field.IP4_DST);
        swap(v, Field.IP6_SRC_HI, Field.IP6_DST_HI);
        swap(v, Field.IP6_SRC_LO, Field.IP6_DST_LO);
        swap(v, Field.L4_SRC, Field.L4_DST);
        v[Field.IP_MF.ordinal()] = 0;
        v[Field.IP_OFFSET.ordinal()] = 0;
        Packet r = gen.freshen(PacketGenerator.wellFormed(v, p.payload));
        return frame(REPLY_BASE + forwardId, Kind.REPLY, r);
    }

    /** A reply aimed at the chain's reply entries (no forward flow asked for it); null without a reply ingress. */
    public Frame unmappedReply(long srcMac, long dstMac) {
        if (replyGen == null) {
            return null;
        }
        Packet p = replyGen.next();
        long[] v = p.v.clone();
        v[Field.ETH_SRC.ordinal()] = srcMac;
        v[Field.ETH_DST.ordinal()] = dstMac;
        return frame(UNMAPPED_BASE + unmapped++, Kind.UNMAPPED_REPLY, PacketGenerator.wellFormed(v, p.payload, p.check));
    }

    private static Frame frame(int id, Kind kind, Packet p) {
        FrameCodec.Shape s = new FrameCodec.Shape();
        s.ipId = id;
        s.marker = marker(id, kind);
        return new Frame(id, kind, FrameCodec.encode(p, s));
    }

    private static void swap(long[] v, Field a, Field b) {
        long t = v[a.ordinal()];
        v[a.ordinal()] = v[b.ordinal()];
        v[b.ordinal()] = t;
    }

    static byte[] marker(int id, Kind kind) {
        return new byte[] {MAGIC[0], MAGIC[1], MAGIC[2], (byte) kind.ordinal(), (byte) (id >>> 24),
            (byte) (id >>> 16), (byte) (id >>> 8), (byte) id, check(kind.ordinal(), id)};
    }

    /** A byte of the kind and number well mixed: a magic spelled by chance rarely has the right one after it. */
    private static byte check(int kind, int id) {
        int h = (id ^ kind << 24) * 0x9e3779b1;
        h ^= h >>> 15;
        h *= 0x85ebca6b;
        return (byte) (h >>> 24 ^ h >>> 16);
    }

    /**
     * The frame number and kind in a frame's marker, or null if it carries none: the first occurrence of the
     * magic whose check byte matches. Kind is null for an unknown ordinal.
     */
    public static Object[] identify(byte[] f) {
        for (int i = 0; i + MARKER_BYTES <= f.length; i++) {
            if (f[i] == MAGIC[0] && f[i + 1] == MAGIC[1] && f[i + 2] == MAGIC[2]) {
                int k = f[i + 3] & 0xff;
                int id = (f[i + 4] & 0xff) << 24 | (f[i + 5] & 0xff) << 16 | (f[i + 6] & 0xff) << 8 | f[i + 7] & 0xff;
                if (f[i + 8] == check(k, id)) {
                    return new Object[] {id, k < Kind.values().length ? Kind.values()[k] : null};
                }
            }
        }
        return null;
    }

    /** The kind of a generated frame without a marker: one cut inside its IP header; null if not that. */
    public static Kind unmarkedKind(byte[] f) {
        if (f.length < 14) {
            return null;
        }
        int type = (f[12] & 0xff) << 8 | f[13] & 0xff;
        boolean cut = type == Field.ETH_IP4 && f.length < 34 || type == Field.ETH_IP6 && f.length < 54;
        return cut ? Kind.CUT_IP_HEADER : null;
    }

    private Packet packet(Kind kind, FrameCodec.Shape s) {
        switch (kind) {
            case SAME_FLOW:
                return flows.isEmpty() ? valid(0) : gen.freshen(flows.get(rnd.nextInt(flows.size())));
            case FIRST_FRAGMENT:
                return fragment(true, false);
            case MIDDLE_FRAGMENT:
                s.fragmentOffset = 1 + rnd.nextInt(8191);
                return fragment(true, true);
            case LAST_FRAGMENT:
                s.fragmentOffset = 1 + rnd.nextInt(8191);
                return fragment(false, true);
            case DONT_FRAGMENT:
                s.dontFragment = true;
                return valid(0);
            case IP_OPTIONS:
                s.ipOptions = 4 * (1 + rnd.nextInt(10));
                return valid(4);
            case TTL_0:
            case TTL_1:
                return with(valid(0), Field.TTL, kind == Kind.TTL_0 ? 0 : 1);
            case BROADCAST:
            case MULTICAST:
                return group(valid(0), kind == Kind.BROADCAST);
            case IPV6_EXTENSION_HEADERS:
                s.ipv6ExtHeaders = 1 + rnd.nextInt(2);
                return valid(6);
            case IPV6_FRAGMENT: {
                s.fragmentOffset = 1 + rnd.nextInt(8191);
                Packet p = valid(6);
                boolean first = rnd.nextBoolean();
                long[] v = p.v.clone();
                v[Field.IP_MF.ordinal()] = first ? 1 : rnd.nextInt(2);
                v[Field.IP_OFFSET.ordinal()] = first ? 0 : 1;
                return PacketGenerator.wellFormed(v, p.payload);
            }
            case VLAN_TAGGED: {
                long[] v = valid(0).v.clone();
                v[Field.VLAN.ordinal()] = 1 + rnd.nextInt(4094);
                return PacketGenerator.wellFormed(v, payload(), HeaderCheck.NOT_IP);
            }
            case ARP:
            case OTHER_ETHERTYPE: {
                long[] v = valid(0).v.clone();
                v[Field.ETH_TYPE.ordinal()] = kind == Kind.ARP ? 0x0806 : 0x88b5;
                return PacketGenerator.wellFormed(v, payload(), HeaderCheck.NOT_IP);
            }
            case CUT_IP_HEADER:
            case LONG_IP_LENGTH:
            case SHORT_IP_HEADER_LENGTH:
                s.broken = kind == Kind.CUT_IP_HEADER ? FrameCodec.Break.CUT_HEADER
                        : kind == Kind.LONG_IP_LENGTH ? FrameCodec.Break.LONG_LENGTH : FrameCodec.Break.SHORT_IHL;
                return valid(kind == Kind.SHORT_IP_HEADER_LENGTH ? 4 : 0);
            case BAD_IP_CHECKSUM:
                s.badIpChecksum = true;
                return valid(4);
            case BAD_L4_CHECKSUM:
                s.badL4Checksum = true;
                return valid(0);
            case UDP_WITHOUT_CHECKSUM:
                s.udpNoChecksum = true;
                return with(valid(4), Field.IP_PROTO, 17);
            default:
                return gen.next();
        }
    }

    /** A valid packet of the generator, of a family if asked (4 or 6; 0 = either), with a unicast source MAC. */
    private Packet valid(int family) {
        Packet p = gen.next();
        for (int tries = 0; tries < 200; tries++) {
            if (p.check == HeaderCheck.VALID && (family == 0 || (family == 6) == p.isIp6())) {
                break;
            }
            p = gen.next();
        }
        long[] v = p.v.clone();
        v[Field.ETH_SRC.ordinal()] &= ~(1L << 40);
        return PacketGenerator.wellFormed(v, p.payload);
    }

    /** A fragment, half the time of a known flow: first (offset 0, more fragments), middle or last. */
    private Packet fragment(boolean more, boolean later) {
        Packet p = !flows.isEmpty() && rnd.nextBoolean() ? flows.get(rnd.nextInt(flows.size())) : valid(0);
        long[] v = p.v.clone();
        v[Field.IP_MF.ordinal()] = more ? 1 : 0;
        v[Field.IP_OFFSET.ordinal()] = later ? 1 : 0;
        return PacketGenerator.wellFormed(v, payload());
    }

    private static Packet with(Packet p, Field f, long value) {
        long[] v = p.v.clone();
        v[f.ordinal()] = value;
        return PacketGenerator.wellFormed(v, p.payload);
    }

    /** The packet sent to everyone on the link (broadcast) or to a multicast group, at layers 2 and 3. */
    private static Packet group(Packet p, boolean broadcast) {
        long[] v = p.v.clone();
        if (p.isIp6()) {
            v[Field.ETH_DST.ordinal()] = broadcast ? 0x333300000001L : 0x3333000000fbL;
            v[Field.IP6_DST_HI.ordinal()] = 0xff02000000000000L;
            v[Field.IP6_DST_LO.ordinal()] = broadcast ? 1 : 0xfb;
        } else {
            v[Field.ETH_DST.ordinal()] = broadcast ? 0xffffffffffffL : 0x01005e0000fbL;
            v[Field.IP4_DST.ordinal()] = broadcast ? 0xffffffffL : 0xe00000fbL;
        }
        return PacketGenerator.wellFormed(v, p.payload);
    }

    private byte[] payload() {
        return gen.payload();
    }
}
