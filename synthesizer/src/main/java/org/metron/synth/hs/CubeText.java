package org.metron.synth.hs;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.metron.synth.IpPrefix;

/**
 * Renders a cube in IPClassifier pattern syntax (with Metron's extensions, see docs/contracts.md), so
 * synthesized filters can be printed in TrafficClass.filters() and emitted into software classifiers that the
 * agent parses. Sets are printed directly or as {@code not (...)} of their complement, whichever is shorter.
 */
public final class CubeText {
    private CubeText() {
    }

    /** The pattern text; {@code true} for the cube matching everything. */
    public static String format(Cube c) {
        return format(c, new Texts());
    }

    /** Texts of per-field sets made so far, by field and set contents. */
    private static final class Texts {
        @SuppressWarnings("unchecked")
        private final Map<SetKey, String>[] byField = new Map[Field.COUNT];

        Map<SetKey, String> of(Field f) {
            Map<SetKey, String> m = byField[f.ordinal()];
            if (m == null) {
                m = new HashMap<>();
                byField[f.ordinal()] = m;
            }
            return m;
        }
    }

    /** An interval set as a hash key (by contents). */
    private static final class SetKey {
        final long[] set;
        final int hash;

        SetKey(long[] set) {
            this.set = set;
            this.hash = Arrays.hashCode(set);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SetKey && Arrays.equals(set, ((SetKey) o).set);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /**
     * The texts of many cubes, each distinct per-field set's text made once: synthesis entries of one firewall
     * rule repeat its addresses and ports.
     */
    public static String[] formatAll(List<Cube> cubes) {
        Texts seen = new Texts();
        String[] out = new String[cubes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = format(cubes.get(i), seen);
        }
        return out;
    }

    private static String format(Cube c, Texts seen) {
        List<String> terms = new ArrayList<>();
        long[] eth = c.get(Field.ETH_TYPE);
        if (eth != null) {
            terms.add(set(eth, Field.ETH_TYPE, v -> v == Field.ETH_IP4 ? "ip vers 4"
                    : v == Field.ETH_IP6 ? "ip vers 6" : "ether type " + v, null));
        }
        addNumeric(terms, c, Field.IP_PROTO, "ip proto", seen);
        addAddr(terms, c, Field.IP4_SRC, null, "src", seen);
        addAddr(terms, c, Field.IP4_DST, null, "dst", seen);
        addAddr(terms, c, Field.IP6_SRC_HI, Field.IP6_SRC_LO, "src", seen);
        addAddr(terms, c, Field.IP6_DST_HI, Field.IP6_DST_LO, "dst", seen);
        addNumeric(terms, c, Field.TOS, "ip tos", seen);
        addNumeric(terms, c, Field.TTL, "ip ttl", seen);
        addBit(terms, c, Field.IP_MF, "ip mf");
        long[] off = c.get(Field.IP_OFFSET);
        if (off != null) {
            terms.add(off[0] == 0 ? "ip firstfrag" : "not ip firstfrag");
        }
        addNumeric(terms, c, Field.L4_SRC, "src port", seen);
        addNumeric(terms, c, Field.L4_DST, "dst port", seen);
        addBit(terms, c, Field.TCP_FIN, "tcp opt fin");
        addBit(terms, c, Field.TCP_SYN, "tcp opt syn");
        addBit(terms, c, Field.TCP_RST, "tcp opt rst");
        addBit(terms, c, Field.TCP_PSH, "tcp opt psh");
        addBit(terms, c, Field.TCP_ACK, "tcp opt ack");
        addBit(terms, c, Field.TCP_URG, "tcp opt urg");
        addNumeric(terms, c, Field.ICMP_TYPE, "icmp type", seen);
        for (Field f : new Field[] {Field.ETH_SRC, Field.ETH_DST, Field.VLAN}) {
            if (c.get(f) != null) {
                throw new IllegalStateException("no IPClassifier syntax for a test on " + f);
            }
        }
        return terms.isEmpty() ? "true" : String.join(" and ", terms);
    }

    private interface ValueText {
        String of(long v);
    }

    private interface RangeText {
        String of(long lo, long hi);
    }

    private static void addBit(List<String> terms, Cube c, Field f, String word) {
        long[] s = c.get(f);
        if (s != null) {
            terms.add(s[0] == 1 ? word : "not " + word);
        }
    }

    private static void addNumeric(List<String> terms, Cube c, Field f, String word, Texts seen) {
        long[] s = c.get(f);
        if (s != null) {
            terms.add(seen.of(f).computeIfAbsent(new SetKey(s), k -> set(k.set, f, v -> word + " " + v, (lo, hi) -> "(" + word + " >= "
                    + lo + " and " + word + " <= " + hi + ")")));
        }
    }

    /** Prints a set as a disjunction of values/ranges, or the negated complement if that is shorter. */
    private static String set(long[] s, Field f, ValueText value, RangeText range) {
        long[] comp = IntervalSet.complement(s, f);
        boolean negate = comp.length < s.length && comp.length > 0;
        long[] use = negate ? comp : s;
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < use.length; i += 2) {
            long lo = use[i];
            long hi = use[i + 1];
            if (range == null || hi - lo < 2) {
                for (long v = lo; ; v++) {
                    parts.add(value.of(v));
                    if (v == hi) {
                        break;
                    }
                }
            } else {
                parts.add(range.of(lo, hi));
            }
        }
        String body = parts.size() == 1 ? parts.get(0) : "(" + String.join(" or ", parts) + ")";
        return negate ? "not " + body : body;
    }

    private static void addAddr(List<String> terms, Cube c, Field hiField, Field loField, String dir,
                                Texts seen) {
        long[] hi = c.get(hiField);
        long[] lo = loField == null ? null : c.get(loField);
        if (hi == null && lo == null) {
            return;
        }
        if (lo == null) {
            SetKey key = new SetKey(hi);
            String known = seen.of(hiField).get(key);
            if (known == null) {
                List<String> one = new ArrayList<>(1);
                addAddr(one, hi, null, hiField, loField, dir);
                known = one.get(0);
                seen.of(hiField).put(key, known);
            }
            terms.add(known);
            return;
        }
        addAddr(terms, hi, lo, hiField, loField, dir);
    }

    private static void addAddr(List<String> terms, long[] hi, long[] lo, Field hiField, Field loField, String dir) {
        List<String> nets = new ArrayList<>();
        if (loField == null) {
            for (Prefixes.Block b : Prefixes.of(hi, 32)) {
                nets.add(IpPrefix.of(false, BigInteger.valueOf(b.value), b.length).toString());
            }
            long[] comp = IntervalSet.complement(hi, hiField);
            if (comp.length > 0 && Prefixes.count(comp, 32) < nets.size()) {
                nets.clear();
                for (Prefixes.Block b : Prefixes.of(comp, 32)) {
                    nets.add(IpPrefix.of(false, BigInteger.valueOf(b.value), b.length).toString());
                }
                terms.add("not " + netList(dir, nets));
                return;
            }
            terms.add(netList(dir, nets));
            return;
        }
        if (lo == null) {
            for (Prefixes.Block b : Prefixes.of(hi, 64)) {
                nets.add(IpPrefix.of(true, u64(b.value).shiftLeft(64), b.length).toString());
            }
        } else {
            if (hi == null || hi.length != 2 || hi[0] != hi[1]) {
                throw new IllegalStateException("IPv6 low half constrained without an exact high half");
            }
            for (Prefixes.Block b : Prefixes.of(lo, 64)) {
                nets.add(IpPrefix.of(true, u64(hi[0]).shiftLeft(64).or(u64(b.value)), 64 + b.length).toString());
            }
        }
        terms.add(netList(dir, nets));
    }

    private static String netList(String dir, List<String> nets) {
        List<String> parts = new ArrayList<>();
        for (String n : nets) {
            parts.add(n.endsWith("/32") && n.indexOf(':') < 0 || n.endsWith("/128")
                    ? dir + " host " + n.substring(0, n.indexOf('/')) : dir + " net " + n);
        }
        return parts.size() == 1 ? parts.get(0) : "(" + String.join(" or ", parts) + ")";
    }

    private static BigInteger u64(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }
}
