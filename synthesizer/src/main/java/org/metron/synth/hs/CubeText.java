package org.metron.synth.hs;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

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
        List<String> terms = new ArrayList<>();
        long[] eth = c.get(Field.ETH_TYPE);
        if (eth != null) {
            terms.add(set(eth, Field.ETH_TYPE, v -> v == Field.ETH_IP4 ? "ip vers 4"
                    : v == Field.ETH_IP6 ? "ip vers 6" : "ether type " + v, null));
        }
        addNumeric(terms, c, Field.IP_PROTO, "ip proto");
        addAddr(terms, c, Field.IP4_SRC, null, "src");
        addAddr(terms, c, Field.IP4_DST, null, "dst");
        addAddr(terms, c, Field.IP6_SRC_HI, Field.IP6_SRC_LO, "src");
        addAddr(terms, c, Field.IP6_DST_HI, Field.IP6_DST_LO, "dst");
        addNumeric(terms, c, Field.TOS, "ip tos");
        addNumeric(terms, c, Field.TTL, "ip ttl");
        addBit(terms, c, Field.IP_MF, "ip mf");
        long[] off = c.get(Field.IP_OFFSET);
        if (off != null) {
            terms.add(off[0] == 0 ? "ip firstfrag" : "not ip firstfrag");
        }
        addNumeric(terms, c, Field.L4_SRC, "src port");
        addNumeric(terms, c, Field.L4_DST, "dst port");
        addBit(terms, c, Field.TCP_FIN, "tcp opt fin");
        addBit(terms, c, Field.TCP_SYN, "tcp opt syn");
        addBit(terms, c, Field.TCP_RST, "tcp opt rst");
        addBit(terms, c, Field.TCP_PSH, "tcp opt psh");
        addBit(terms, c, Field.TCP_ACK, "tcp opt ack");
        addBit(terms, c, Field.TCP_URG, "tcp opt urg");
        addNumeric(terms, c, Field.ICMP_TYPE, "icmp type");
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

    private static void addNumeric(List<String> terms, Cube c, Field f, String word) {
        long[] s = c.get(f);
        if (s != null) {
            terms.add(set(s, f, v -> word + " " + v, (lo, hi) -> "(" + word + " >= " + lo + " and " + word + " <= "
                    + hi + ")"));
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

    private static void addAddr(List<String> terms, Cube c, Field hiField, Field loField, String dir) {
        long[] hi = c.get(hiField);
        long[] lo = loField == null ? null : c.get(loField);
        if (hi == null && lo == null) {
            return;
        }
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
