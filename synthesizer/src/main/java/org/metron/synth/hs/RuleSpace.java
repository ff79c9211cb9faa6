package org.metron.synth.hs;

import org.metron.synth.BitMatch;
import org.metron.synth.IpPrefix;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TrafficClass;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The header space of device rules: what one {@link RuleMatch} matches, and where the rule tables of two chains on
 * one ingress point would take each other's traffic (docs/updates.md#shared-ingress).
 *
 * <p>A chain's <em>entry class</em> is the traffic its rules do not drop: for each rule that does not drop, its
 * match less every rule of higher priority (equal priorities are disjoint). Its <em>rule space</em> is what its
 * rules match at all, less its default: the rules of its lowest priority when they all drop (the device drops what
 * no rule matches, so a default drop is everyone's and is installed below every chain's rules). Two chains share
 * an ingress point when neither's rule space meets the other's entry class: then a packet of one chain meets only
 * that chain's rules, and a packet neither takes meets only drops, whatever the priorities of the two tables.
 */
public final class RuleSpace {
    /** Pieces one subtraction may leave before the question is given up on (answered as an overlap). */
    static final int MAX_PIECES = 100_000;

    private RuleSpace() {
    }

    /** The packets a device rule matches, as per-field sets over the packet model (null = any). */
    public static long[][] sets(RuleMatch m) {
        long[][] s = new long[Field.COUNT][];
        m.ethType().ifPresent(v -> s[Field.ETH_TYPE.ordinal()] = IntervalSet.point(v));
        m.vlan().ifPresent(v -> s[Field.VLAN.ordinal()] = IntervalSet.point(v == RuleMatch.UNTAGGED ? 0 : v));
        m.ipProto().ifPresent(v -> s[Field.IP_PROTO.ordinal()] = IntervalSet.point(v));
        m.ipSrc().ifPresent(p -> prefix(s, p, true));
        m.ipDst().ifPresent(p -> prefix(s, p, false));
        m.l4Src().ifPresent(r -> s[Field.L4_SRC.ordinal()] = range(r));
        m.l4SrcBits().ifPresent(b -> s[Field.L4_SRC.ordinal()] = IntervalSet.intersect(
                s[Field.L4_SRC.ordinal()] == null ? IntervalSet.full(Field.L4_SRC) : s[Field.L4_SRC.ordinal()],
                bits(b, Field.L4_SRC)));
        m.l4Dst().ifPresent(r -> s[Field.L4_DST.ordinal()] = range(r));
        m.tos().ifPresent(r -> s[Field.TOS.ordinal()] = range(r));
        m.ttl().ifPresent(r -> s[Field.TTL.ordinal()] = range(r));
        m.icmpType().ifPresent(r -> s[Field.ICMP_TYPE.ordinal()] = range(r));
        m.tcpFlags().ifPresent(b -> {
            for (Field f : Field.values()) {
                if (f.tcpFlagBit() != 0 && (b.mask() & f.tcpFlagBit()) != 0) {
                    s[f.ordinal()] = IntervalSet.point((b.value() & f.tcpFlagBit()) != 0 ? 1 : 0);
                }
            }
        });
        m.fragment().ifPresent(later -> s[Field.IP_OFFSET.ordinal()] = IntervalSet.point(later ? 1 : 0));
        return s;
    }

    /** The packets a device rule matches as a cube. */
    public static Cube cube(RuleMatch m) {
        long[][] s = sets(m);
        Cube c = Cube.ALL;
        for (Field f : Field.values()) {
            if (s[f.ordinal()] != null) {
                c = c.with(f, s[f.ordinal()]);
            }
        }
        return c;
    }

    /** The values of a field with {@code (v & mask) == value}, as intervals (runs of the bits below the mask). */
    private static long[] bits(BitMatch b, Field f) {
        int low = Integer.numberOfTrailingZeros(b.mask() | Integer.highestOneBit((int) f.max()) << 1);
        long run = (1L << low) - 1;
        List<Long> out = new ArrayList<>();
        for (long v = 0; v <= f.max(); v += 1L << low) {
            if ((v & b.mask()) == b.value()) {
                out.add(v);
                out.add(v + run);
            }
        }
        long[] s = new long[out.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = out.get(i);
        }
        return s;
    }

    private static long[] range(RangeMatch r) {
        return IntervalSet.range(r.lo(), r.hi());
    }

    private static void prefix(long[][] s, IpPrefix p, boolean src) {
        if (!p.isIp6()) {
            long a = p.address().longValue();
            s[(src ? Field.IP4_SRC : Field.IP4_DST).ordinal()] = IntervalSet.range(a, a + (1L << (32 - p.length())) - 1);
            return;
        }
        BigInteger a = p.address();
        BigInteger last = a.add(BigInteger.ONE.shiftLeft(128 - p.length())).subtract(BigInteger.ONE);
        long hiA = a.shiftRight(64).longValue();
        long hiB = last.shiftRight(64).longValue();
        s[(src ? Field.IP6_SRC_HI : Field.IP6_DST_HI).ordinal()] = IntervalSet.range(hiA, hiB);
        if (p.length() > 64) {
            s[(src ? Field.IP6_SRC_LO : Field.IP6_DST_LO).ordinal()] = IntervalSet.range(a.longValue(),
                    last.longValue());
        }
    }

    /** The priority of {@code rules}' default: their lowest level when it holds only drops. */
    public static OptionalInt defaultDropLevel(List<OffloadRule> rules) {
        OptionalInt lowest = rules.stream().mapToInt(OffloadRule::priority).min();
        boolean drops = lowest.isPresent() && rules.stream().filter(x -> x.priority() == lowest.getAsInt())
                .allMatch(x -> x.action().type() == RuleAction.Type.DROP);
        return drops ? lowest : OptionalInt.empty();
    }

    /**
     * A packet (as a cube narrowed to one value on every field the overlap constrains) that one chain's rules
     * would take from the other's entry class, if any.
     *
     * @throws IllegalStateException when the entry class is too fragmented to decide (more than {@value
     *                               #MAX_PIECES} pieces)
     */
    public static Optional<Cube> overlap(List<OffloadRule> a, List<OffloadRule> b) {
        Optional<Cube> x = takes(a, b);
        return x.isPresent() ? x : takes(b, a);
    }

    /** A packet of {@code owner}'s entry class that a rule of {@code other} (but its default) matches. */
    private static Optional<Cube> takes(List<OffloadRule> other, List<OffloadRule> owner) {
        List<Cube> space = new ArrayList<>();
        OptionalInt shared = defaultDropLevel(other);
        for (OffloadRule r : other) {
            if (!shared.isPresent() || r.priority() != shared.getAsInt()) {
                space.add(cube(r.match()));
            }
        }
        if (space.isEmpty()) {
            return Optional.empty();
        }
        for (Cube piece : entryClass(owner)) {
            for (Cube s : space) {
                Cube x = piece.intersect(s);
                if (x != null) {
                    return Optional.of(point(x));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The entry class of a chain's rules, as disjoint cubes; those of rules that classify come before those of rules
     * sending packets unclassified to software (e.g. fragments a switch cannot classify), so an example of an overlap
     * is an ordinary packet when there is one.
     */
    static List<Cube> entryClass(List<OffloadRule> rules) {
        List<OffloadRule> ordered = new ArrayList<>(rules);
        ordered.sort(Comparator.comparingInt(OffloadRule::priority).reversed());
        List<Cube> out = new ArrayList<>();
        List<Cube> punted = new ArrayList<>();
        for (OffloadRule r : ordered) {
            if (r.action().type() == RuleAction.Type.DROP) {
                continue;
            }
            List<Cube> pieces = List.of(cube(r.match()));
            for (OffloadRule h : ordered) {
                if (h.priority() <= r.priority() || pieces.isEmpty()) {
                    break;
                }
                pieces = subtract(pieces, cube(h.match()));
            }
            boolean unclassified = r.action().type() == RuleAction.Type.TO_SERVER
                    && (r.action().classId() == TrafficClass.UNCLASSIFIED
                    || r.action().classId() == TrafficClass.REPLY_UNCLASSIFIED);
            (unclassified ? punted : out).addAll(pieces);
        }
        out.addAll(punted);
        return out;
    }

    private static List<Cube> subtract(List<Cube> pieces, Cube h) {
        List<Cube> out = new ArrayList<>();
        List<Cube> outside = null;
        for (Cube c : pieces) {
            if (!c.overlaps(h)) {
                out.add(c);
                continue;
            }
            outside = outside == null ? h.complement() : outside;
            for (Cube q : outside) {
                Cube x = c.intersect(q);
                if (x != null) {
                    out.add(x);
                }
            }
            if (out.size() > MAX_PIECES) {
                throw new IllegalStateException("entry class too fragmented to compare (over " + MAX_PIECES
                        + " pieces)");
            }
        }
        return out;
    }

    /** One packet of a cube: each constrained field narrowed to its lowest value. */
    static Cube point(Cube c) {
        Cube p = c;
        for (Field f : c.fields()) {
            p = p.with(f, IntervalSet.point(c.get(f)[0]));
        }
        return p;
    }
}
