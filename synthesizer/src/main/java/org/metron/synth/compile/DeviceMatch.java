package org.metron.synth.compile;

import org.metron.synth.BitMatch;
import org.metron.synth.IpPrefix;
import org.metron.synth.MatchField;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleMatch;
import org.metron.synth.TargetProfile;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.hs.Prefixes;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Turns one header-space cube into the device matches that cover exactly the same packets, or says it cannot:
 * per family and protocol (OpenFlow prerequisites), addresses as prefixes, ranges as value/mask blocks when
 * the target needs them. Packet-model facts used: fields a packet lacks read as 0 on the device too (ports of
 * non-first fragments and of non-TCP/UDP packets), so a constraint excluding 0 on such a field implies the
 * guard it came with. On a target that reads no transport header in any fragment
 * ({@link TargetProfile#l4InFirstFragments()} false) the matches of a cube testing one of {@link
 * #FRAGMENT_ZEROED} are exact for unfragmented packets only: {@link #fragmentPunt} covers its fragments.
 */
final class DeviceMatch {
    /** Largest number of device rules one entry may expand to before it is left to software. */
    static final int MAX_EXPANSION = 512;

    private static final int[] L4_PROTOS = {6, 17};

    /** IPv6 next header of a fragment header. */
    static final long IPV6_FRAGMENT_HEADER = 44;

    /** Fields a device that reads no transport header in fragments sees as 0 in every fragment. */
    static final Field[] FRAGMENT_ZEROED = {Field.L4_SRC, Field.L4_DST, Field.ICMP_TYPE};

    private DeviceMatch() {
    }

    /** The matches, or null if the target cannot express the cube. */
    static List<RuleMatch> of(Cube c, TargetProfile t) {
        if (c.get(Field.ETH_SRC) != null || c.get(Field.ETH_DST) != null || c.get(Field.IP_MF) != null) {
            return null;
        }
        Cube cube = relaxFirstFragment(c);
        for (Field f : cube.fields()) {
            if (f != Field.ETH_TYPE && !t.matchable().contains(f.matchField())) {
                return null;
            }
        }
        Boolean laterFragment = null;
        if (cube.get(Field.IP_OFFSET) != null) {
            if (!t.matchable().contains(MatchField.IP_FRAG)) {
                return null;
            }
            laterFragment = cube.get(Field.IP_OFFSET)[0] == 1;
            cube = cube.without(Field.IP_OFFSET);
        }
        List<RuleMatch> out = new ArrayList<>();
        long[] eth = cube.get(Field.ETH_TYPE);
        for (long fam : new long[] {Field.ETH_IP4, Field.ETH_IP6}) {
            if (eth != null && !IntervalSet.contains(eth, fam)) {
                continue;
            }
            Cube fc = family(cube, fam == Field.ETH_IP6);
            if (fc == null) {
                continue;
            }
            RuleMatch.Builder b = RuleMatch.builder().ethType((int) fam);
            if (t.untaggedOnly() && fc.get(Field.VLAN) == null) {
                b.vlan(RuleMatch.UNTAGGED);
            }
            if (laterFragment != null) {
                b.fragment(laterFragment);
            }
            if (!expandProto(fc, fam == Field.ETH_IP6, t, b, out)) {
                return null;
            }
            if (out.size() > MAX_EXPANSION) {
                return null;
            }
        }
        return out;
    }

    /** A superset of a cube the device can match, and its device matches. */
    static final class Relaxed {
        final Cube cube;
        final List<RuleMatch> rules;

        Relaxed(Cube cube, List<RuleMatch> rules) {
            this.cube = cube;
            this.rules = rules;
        }
    }

    /**
     * Device matches for a superset of the cube: constraints the target cannot match are dropped. Null if
     * nothing matchable is left (the superset is every packet).
     */
    static Relaxed relaxed(Cube c, TargetProfile t) {
        Cube r = relaxFirstFragment(c);
        long[] off = r.get(Field.IP_OFFSET);
        if (off != null && off[0] == 1 && !t.matchable().contains(MatchField.IP_FRAG)) {
            // non-first fragments carry no L4 header: devices (and the packet model) read their ports as 0
            r = r.without(Field.IP_OFFSET);
            Cube z = r.with(Field.L4_SRC, IntervalSet.point(0));
            z = z == null ? null : z.with(Field.L4_DST, IntervalSet.point(0));
            if (z != null) {
                r = z;
            }
        }
        for (Field f : r.fields()) {
            boolean keep = f == Field.ETH_TYPE || f != Field.ETH_SRC && f != Field.ETH_DST && f != Field.IP_MF
                    && t.matchable().contains(f.matchField());
            if (!keep) {
                r = r.without(f);
            }
        }
        while (true) {
            if (r.isAll() || r.fields().equals(List.of(Field.ETH_TYPE))) {
                return null;
            }
            List<RuleMatch> m = of(r, t);
            if (m != null) {
                return new Relaxed(r, m);
            }
            // too many device rules: widen further, dropping the field with the most intervals
            Field widest = null;
            for (Field f : r.fields()) {
                if (f != Field.ETH_TYPE && (widest == null || r.get(f).length > r.get(widest).length)) {
                    widest = f;
                }
            }
            r = r.without(widest);
        }
    }

    /**
     * True if the target cannot tell the cube's fragments from others: the cube tests a field the target reads
     * as 0 in every fragment (its matches would judge first fragments by ports they do not read).
     */
    static boolean fragmentBlind(Cube c, TargetProfile t) {
        if (t.l4InFirstFragments()) {
            return false;
        }
        for (Field f : FRAGMENT_ZEROED) {
            if (c.get(f) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * The punt for a {@link #fragmentBlind} cube's fragments, placed just above its rules: the cube's other
     * constraints with the zeroed fields at 0, which is how the device sees every fragment those constraints
     * admit (and some unfragmented packets with those fields 0, which software classifies as well). Null if
     * nothing matchable is left.
     */
    static Relaxed fragmentPunt(Cube c, TargetProfile t) {
        Cube r = c.without(Field.IP_OFFSET).without(Field.IP_MF);
        for (Field f : Field.values()) {
            if (f.tcpFlagBit() != 0) {
                r = r.without(f);
            }
        }
        for (Field f : FRAGMENT_ZEROED) {
            r = r.without(f).with(f, IntervalSet.point(0));
        }
        return relaxed(r, t);
    }

    /**
     * The punt for later IPv6 fragments on a target that reads their protocol as 44 (the fragment header's,
     * where Click reads the upper layer's): it matches "IPv6, protocol 44" and stands for every later IPv6
     * fragment. Null if the target cannot match the protocol.
     */
    static Relaxed laterIpv6FragmentPunt(TargetProfile t) {
        Cube seen = Cube.ALL.with(Field.ETH_TYPE, IntervalSet.point(Field.ETH_IP6))
                .with(Field.IP_PROTO, IntervalSet.point(IPV6_FRAGMENT_HEADER));
        List<RuleMatch> m = of(seen, t);
        Cube cover = Cube.ALL.with(Field.ETH_TYPE, IntervalSet.point(Field.ETH_IP6))
                .with(Field.IP_OFFSET, IntervalSet.point(1));
        return m == null ? null : new Relaxed(cover, m);
    }

    /**
     * The packets a punt rule of this cube sends to software, as the model (Click) sees them, covered by cubes:
     * the cube itself, and on a target blind to fragments' transport fields, every fragment its other
     * constraints admit when the cube allows 0 in all of those fields.
     */
    static List<Cube> puntCover(Cube c, TargetProfile t) {
        if (t.l4InFirstFragments()) {
            return List.of(c);
        }
        Cube anyL4 = c;
        for (Field f : FRAGMENT_ZEROED) {
            long[] s = c.get(f);
            if (s != null && !IntervalSet.contains(s, 0)) {
                return List.of(c);
            }
            anyL4 = anyL4.without(f);
        }
        Cube frags = anyL4.with(Field.IP_MF, IntervalSet.point(1));
        return frags == null || anyL4 == c ? List.of(c) : List.of(c, frags);
    }

    /** Drops "first fragment" when another constraint already excludes non-first fragments (their L4 = 0). */
    private static Cube relaxFirstFragment(Cube c) {
        long[] off = c.get(Field.IP_OFFSET);
        if (off == null || off[0] != 0) {
            return c;
        }
        for (Field f : new Field[] {Field.L4_SRC, Field.L4_DST, Field.ICMP_TYPE, Field.TCP_FIN, Field.TCP_SYN,
                Field.TCP_RST, Field.TCP_PSH, Field.TCP_ACK, Field.TCP_URG}) {
            long[] s = c.get(f);
            if (s != null && !IntervalSet.contains(s, 0)) {
                return c.without(Field.IP_OFFSET);
            }
        }
        return c;
    }

    /** The cube for one family: the other family's address fields read 0 there. */
    private static Cube family(Cube c, boolean v6) {
        Field[] other = v6 ? new Field[] {Field.IP4_SRC, Field.IP4_DST}
                : new Field[] {Field.IP6_SRC_HI, Field.IP6_SRC_LO, Field.IP6_DST_HI, Field.IP6_DST_LO};
        Cube r = c.without(Field.ETH_TYPE);
        for (Field f : other) {
            long[] s = r.get(f);
            if (s != null) {
                if (!IntervalSet.contains(s, 0)) {
                    return null;
                }
                r = r.without(f);
            }
        }
        return r;
    }

    private static boolean hasL4(Cube c) {
        for (Field f : new Field[] {Field.L4_SRC, Field.L4_DST, Field.ICMP_TYPE, Field.TCP_FIN, Field.TCP_SYN,
                Field.TCP_RST, Field.TCP_PSH, Field.TCP_ACK, Field.TCP_URG}) {
            if (c.get(f) != null) {
                return true;
            }
        }
        return false;
    }

    private static boolean expandProto(Cube c, boolean v6, TargetProfile t, RuleMatch.Builder base,
                                       List<RuleMatch> out) {
        long[] protos = c.get(Field.IP_PROTO);
        if (!hasL4(c)) {
            if (protos == null) {
                return expandRest(c, v6, t, base, out);
            }
            if (protoPoints(protos) > 64) {
                return false;
            }
            for (int i = 0; i < protos.length; i += 2) {
                for (long p = protos[i]; p <= protos[i + 1]; p++) {
                    if (!expandRest(c.without(Field.IP_PROTO), v6, t, copy(base).ipProto((int) p), out)) {
                        return false;
                    }
                }
            }
            return true;
        }
        // L4 fields need an exact protocol; other protocols read 0 in those fields
        long[] all = protos == null ? IntervalSet.full(Field.IP_PROTO) : protos;
        int icmp = v6 ? 58 : 1;
        List<Long> special = List.of(6L, 17L, (long) icmp);
        for (long p : special) {
            if (!IntervalSet.contains(all, p)) {
                continue;
            }
            Cube pc = l4For(c.without(Field.IP_PROTO), (int) p, icmp);
            if (pc != null && !expandRest(pc, v6, t, copy(base).ipProto((int) p), out)) {
                return false;
            }
        }
        Cube rest = l4For(c.without(Field.IP_PROTO), -1, icmp);
        if (rest == null) {
            return true;
        }
        long[] others = all;
        for (long p : special) {
            others = IntervalSet.intersect(others, IntervalSet.complement(IntervalSet.point(p), Field.IP_PROTO));
        }
        if (protoPoints(others) > 64) {
            return false;
        }
        for (int i = 0; i < others.length; i += 2) {
            for (long p = others[i]; p <= others[i + 1]; p++) {
                if (!expandRest(rest, v6, t, copy(base).ipProto((int) p), out)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static long protoPoints(long[] s) {
        long n = 0;
        for (int i = 0; i < s.length; i += 2) {
            n += s[i + 1] - s[i] + 1;
        }
        return n;
    }

    /** The cube for protocol p: L4 fields it lacks must allow 0 and are dropped; null if impossible. */
    private static Cube l4For(Cube c, int p, int icmp) {
        Cube r = c;
        boolean ports = p == 6 || p == 17;
        Field[] l4 = {Field.L4_SRC, Field.L4_DST};
        for (Field f : l4) {
            if (!ports && r.get(f) != null) {
                if (!IntervalSet.contains(r.get(f), 0)) {
                    return null;
                }
                r = r.without(f);
            }
        }
        if (p != icmp && r.get(Field.ICMP_TYPE) != null) {
            if (!IntervalSet.contains(r.get(Field.ICMP_TYPE), 0)) {
                return null;
            }
            r = r.without(Field.ICMP_TYPE);
        }
        for (Field f : new Field[] {Field.TCP_FIN, Field.TCP_SYN, Field.TCP_RST, Field.TCP_PSH, Field.TCP_ACK,
                Field.TCP_URG}) {
            if (p != 6 && r.get(f) != null) {
                if (!IntervalSet.contains(r.get(f), 0)) {
                    return null;
                }
                r = r.without(f);
            }
        }
        return r;
    }

    private static RuleMatch.Builder copy(RuleMatch.Builder b) {
        return b.copy();
    }

    private interface Dim {
        void expand(RuleMatch.Builder b, Consumer<RuleMatch.Builder> next);
    }

    private static boolean expandRest(Cube c, boolean v6, TargetProfile t, RuleMatch.Builder base,
                                      List<RuleMatch> out) {
        List<Dim> dims = new ArrayList<>();
        if (!addAddr(c, v6, true, dims) || !addAddr(c, v6, false, dims)) {
            return false;
        }
        addRange(c, Field.L4_SRC, 16, t, dims, (b, r) -> b.l4Src(r));
        addRange(c, Field.L4_DST, 16, t, dims, (b, r) -> b.l4Dst(r));
        addRange(c, Field.TOS, 8, t, dims, (b, r) -> b.tos(r));
        addRange(c, Field.TTL, 8, t, dims, (b, r) -> b.ttl(r));
        addRange(c, Field.ICMP_TYPE, 8, t, dims, (b, r) -> b.icmpType(r));
        long[] vlan = c.get(Field.VLAN);
        if (vlan != null) {
            if (protoPoints(vlan) > 16) {
                return false;
            }
            dims.add((b, next) -> {
                for (int i = 0; i < vlan.length; i += 2) {
                    for (long v = vlan[i]; v <= vlan[i + 1]; v++) {
                        // VLAN 0 is an untagged packet in the model
                        next.accept(b.copy().vlan(v == 0 ? RuleMatch.UNTAGGED : (int) v));
                    }
                }
            });
        }
        int value = 0;
        int mask = 0;
        for (Field f : new Field[] {Field.TCP_FIN, Field.TCP_SYN, Field.TCP_RST, Field.TCP_PSH, Field.TCP_ACK,
                Field.TCP_URG}) {
            long[] s = c.get(f);
            if (s != null) {
                mask |= f.tcpFlagBit();
                value |= s[0] == 1 ? f.tcpFlagBit() : 0;
            }
        }
        if (mask != 0) {
            BitMatch bm = BitMatch.of(value, mask);
            dims.add((b, next) -> next.accept(b.copy().tcpFlags(bm)));
        }
        int before = out.size();
        expand(dims, 0, base, out);
        return out.size() - before <= MAX_EXPANSION;
    }

    private static void expand(List<Dim> dims, int i, RuleMatch.Builder b, List<RuleMatch> out) {
        if (out.size() > MAX_EXPANSION) {
            return;
        }
        if (i == dims.size()) {
            out.add(b.build());
            return;
        }
        dims.get(i).expand(b, nb -> expand(dims, i + 1, nb, out));
    }

    private interface RangeSetter {
        void set(RuleMatch.Builder b, RangeMatch r);
    }

    private static void addRange(Cube c, Field f, int width, TargetProfile t, List<Dim> dims, RangeSetter s) {
        long[] set = c.get(f);
        if (set == null) {
            return;
        }
        List<RangeMatch> ranges = new ArrayList<>();
        for (int i = 0; i < set.length; i += 2) {
            if (t.rangesAsPrefixes()) {
                for (Prefixes.Block blk : Prefixes.of(set[i], set[i + 1], width)) {
                    int size = 1 << (width - blk.length);
                    ranges.add(RangeMatch.of((int) blk.value, (int) blk.value + size - 1, width));
                }
            } else {
                ranges.add(RangeMatch.of((int) set[i], (int) set[i + 1], width));
            }
        }
        dims.add((b, next) -> {
            for (RangeMatch r : ranges) {
                RuleMatch.Builder nb = b.copy();
                s.set(nb, r);
                next.accept(nb);
            }
        });
    }

    private static boolean addAddr(Cube c, boolean v6, boolean src, List<Dim> dims) {
        List<IpPrefix> nets = new ArrayList<>();
        if (!v6) {
            long[] s = c.get(src ? Field.IP4_SRC : Field.IP4_DST);
            if (s == null) {
                return true;
            }
            for (Prefixes.Block b : Prefixes.of(s, 32)) {
                nets.add(IpPrefix.of(false, BigInteger.valueOf(b.value), b.length));
            }
        } else {
            long[] hi = c.get(src ? Field.IP6_SRC_HI : Field.IP6_DST_HI);
            long[] lo = c.get(src ? Field.IP6_SRC_LO : Field.IP6_DST_LO);
            if (hi == null && lo == null) {
                return true;
            }
            if (lo == null) {
                for (Prefixes.Block b : Prefixes.of(hi, 64)) {
                    nets.add(IpPrefix.of(true, u64(b.value).shiftLeft(64), b.length));
                }
            } else {
                if (hi == null || protoPoints(hi) > 16) {
                    return false;
                }
                for (int i = 0; i < hi.length; i += 2) {
                    for (long h = hi[i]; ; h++) {
                        for (Prefixes.Block b : Prefixes.of(lo, 64)) {
                            nets.add(IpPrefix.of(true, u64(h).shiftLeft(64).or(u64(b.value)), 64 + b.length));
                        }
                        if (h == hi[i + 1]) {
                            break;
                        }
                    }
                }
            }
        }
        if (nets.size() > MAX_EXPANSION) {
            return false;
        }
        dims.add((b, next) -> {
            for (IpPrefix p : nets) {
                next.accept(src ? b.copy().ipSrc(p) : b.copy().ipDst(p));
            }
        });
        return true;
    }

    private static BigInteger u64(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }

    /** True if the target can match every field of the match (used for the unclassified catch-all). */
    static boolean fits(RuleMatch m, TargetProfile t) {
        for (MatchField f : m.fields()) {
            if (f != MatchField.ETH_TYPE && !t.matchable().contains(f)) {
                return false;
            }
        }
        return true;
    }
}
