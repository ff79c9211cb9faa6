package org.metron.synth.elements;

import org.metron.synth.IpPrefix;
import org.metron.synth.core.RewritePattern;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.filter.Expr;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;

/**
 * What rewrite patterns do to packets: to a concrete packet ({@link #apply}), to the symbolic state of a pool's
 * flows ({@link #written}), and to their replies ({@link #replyMatch}, {@link #restored}). An address is written
 * to the fields {@link #addressFields} names, in the parts {@link #addressParts} gives.
 */
final class PatternRewrites {
    private PatternRewrites() {
    }

    /** Applies one pattern to a concrete packet; port ranges allocate their lowest port (see Run.allocated). */
    static void apply(RewritePattern rp, Packet p, Run run) {
        if (rp.saddr != null) {
            setAddr(p, rp.saddr, true);
        }
        if (rp.daddr != null) {
            setAddr(p, rp.daddr, false);
        }
        if (rp.sport != null) {
            setPort(p, Field.L4_SRC, rp.sport, run);
        }
        if (rp.dport != null) {
            setPort(p, Field.L4_DST, rp.dport, run);
        }
    }

    private static void setPort(Packet p, Field f, int[] r, Run run) {
        p.set(f, r[0]);
        if (r[0] != r[1]) {
            run.allocated.put(f, r[0] + "-" + r[1]);
        } else {
            run.allocated.remove(f);
        }
    }

    private static void setAddr(Packet p, IpPrefix a, boolean src) {
        Field[] fields = addressFields(a.isIp6(), src);
        long[] parts = addressParts(a);
        for (int i = 0; i < fields.length; i++) {
            p.set(fields[i], parts[i]);
        }
    }

    /** The fields of a source (or destination) address: IPv6 high and low halves, or the IPv4 address. */
    private static Field[] addressFields(boolean ip6, boolean src) {
        if (ip6) {
            return src ? new Field[] {Field.IP6_SRC_HI, Field.IP6_SRC_LO}
                    : new Field[] {Field.IP6_DST_HI, Field.IP6_DST_LO};
        }
        return new Field[] {src ? Field.IP4_SRC : Field.IP4_DST};
    }

    /** A host address in the parts {@link #addressFields} holds it in. */
    private static long[] addressParts(IpPrefix a) {
        if (a.isIp6()) {
            return new long[] {a.address().shiftRight(64).longValue(), a.address().longValue()};
        }
        return new long[] {a.address().longValue()};
    }

    /** Reply packets the pool's mappings can answer: their rewritten tuples, reversed. */
    static Expr replyMatch(List<RewritePattern> pool) {
        Expr any = Expr.constant(false);
        for (RewritePattern rp : pool) {
            Expr e = Expr.constant(true);
            if (rp.saddr != null) {
                e = Expr.and(e, addrIs(rp.saddr, false));
            }
            if (rp.daddr != null) {
                e = Expr.and(e, addrIs(rp.daddr, true));
            }
            if (rp.sport != null) {
                e = Expr.and(e, Expr.atom(Field.L4_DST, IntervalSet.range(rp.sport[0], rp.sport[1])));
            }
            if (rp.dport != null) {
                e = Expr.and(e, Expr.atom(Field.L4_SRC, IntervalSet.range(rp.dport[0], rp.dport[1])));
            }
            any = Expr.or(any, e);
        }
        return any;
    }

    private static Expr addrIs(IpPrefix a, boolean src) {
        Field[] fields = addressFields(a.isIp6(), src);
        long[] parts = addressParts(a);
        Expr e = Expr.atom(fields[0], IntervalSet.point(parts[0]));
        for (int i = 1; i < fields.length; i++) {
            e = Expr.and(e, Expr.atom(fields[i], IntervalSet.point(parts[i])));
        }
        return e;
    }

    /** The state after a reply restore: each field a pattern rewrote holds, reversed, some flow's original value. */
    static SymState restored(SymState t, List<RewritePattern> pool) {
        boolean ip6 = pool.get(0).family() == 6;
        List<Field> fields = new ArrayList<>();
        for (RewritePattern rp : pool) {
            if (rp.saddr != null) {
                fields.addAll(List.of(addressFields(ip6, false)));
            }
            if (rp.daddr != null) {
                fields.addAll(List.of(addressFields(ip6, true)));
            }
            if (rp.sport != null) {
                fields.add(Field.L4_DST);
            }
            if (rp.dport != null) {
                fields.add(Field.L4_SRC);
            }
        }
        SymState r = t;
        for (Field f : fields) {
            r = r.write(f, IntervalSet.range(0, f.max()), true);
        }
        return r;
    }

    /** The state after a pool rewrite: each written field holds one of the pool's values. */
    static SymState written(SymState t, List<RewritePattern> pool) {
        long[][] vals = new long[Field.COUNT][];
        for (RewritePattern rp : pool) {
            if (rp.saddr != null) {
                addAddr(vals, rp.saddr, true);
            }
            if (rp.daddr != null) {
                addAddr(vals, rp.daddr, false);
            }
            if (rp.sport != null) {
                add(vals, Field.L4_SRC, IntervalSet.range(rp.sport[0], rp.sport[1]));
            }
            if (rp.dport != null) {
                add(vals, Field.L4_DST, IntervalSet.range(rp.dport[0], rp.dport[1]));
            }
        }
        SymState r = t;
        for (Field f : Field.values()) {
            if (vals[f.ordinal()] != null) {
                r = r.write(f, vals[f.ordinal()], true);
            }
        }
        return r;
    }

    private static void addAddr(long[][] vals, IpPrefix a, boolean src) {
        Field[] fields = addressFields(a.isIp6(), src);
        long[] parts = addressParts(a);
        for (int i = 0; i < fields.length; i++) {
            add(vals, fields[i], IntervalSet.point(parts[i]));
        }
    }

    private static void add(long[][] vals, Field f, long[] set) {
        vals[f.ordinal()] = vals[f.ordinal()] == null ? set : IntervalSet.union(vals[f.ordinal()], set);
    }
}
