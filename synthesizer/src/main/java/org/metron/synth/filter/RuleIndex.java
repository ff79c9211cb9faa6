package org.metron.synth.filter;

import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Bit-vector packet classification (Lakshman/Stiliadis): per field, the domain is cut into elementary
 * intervals at every rule boundary, each holding the bitset of rules whose field set covers it; a lookup ANDs
 * one bitset per field. With exact per-field sets (cubes) the first candidate is the first match; with
 * over-approximations (pattern bounds) candidates are confirmed by the caller in order.
 */
public final class RuleIndex {
    private final int rules;
    private final int words;
    private final Field[] fields;
    private final long[][] starts;
    private final long[][][] bits;
    private final long[][] wildcard;

    /**
     * @param sets per rule, per field ordinal: the set (null = any value)
     */
    public RuleIndex(List<long[][]> sets) {
        rules = sets.size();
        words = Math.max(1, (rules + 63) >>> 6);
        List<Field> fs = new ArrayList<>();
        for (Field f : Field.values()) {
            for (long[][] r : sets) {
                if (r[f.ordinal()] != null && !IntervalSet.isFull(r[f.ordinal()], f)) {
                    fs.add(f);
                    break;
                }
            }
        }
        fields = fs.toArray(new Field[0]);
        starts = new long[fields.length][];
        bits = new long[fields.length][][];
        wildcard = new long[fields.length][];
        for (int k = 0; k < fields.length; k++) {
            build(k, sets);
        }
    }

    private void build(int k, List<long[][]> sets) {
        Field f = fields[k];
        int fo = f.ordinal();
        long[] b = new long[16];
        int n = 0;
        b[n++] = 0;
        for (long[][] r : sets) {
            long[] s = r[fo];
            if (s == null) {
                continue;
            }
            for (int i = 0; i < s.length; i += 2) {
                if (n + 2 > b.length) {
                    b = Arrays.copyOf(b, b.length * 2);
                }
                b[n++] = s[i];
                if (s[i + 1] != f.max()) {
                    b[n++] = s[i + 1] + 1;
                }
            }
        }
        long[] sorted = Arrays.copyOf(b, n);
        for (int i = 0; i < n; i++) {
            sorted[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(sorted);
        int u = 0;
        for (int i = 0; i < n; i++) {
            if (u == 0 || sorted[i] != sorted[u - 1]) {
                sorted[u++] = sorted[i];
            }
        }
        long[] st = new long[u];
        for (int i = 0; i < u; i++) {
            st[i] = sorted[i] ^ Long.MIN_VALUE;
        }
        starts[k] = st;
        long[][] bs = new long[u][words];
        long[] wild = new long[words];
        for (int r = 0; r < rules; r++) {
            long[] s = sets.get(r)[fo];
            if (s == null || IntervalSet.isFull(s, f)) {
                wild[r >>> 6] |= 1L << r;
                continue;
            }
            for (int i = 0; i < s.length; i += 2) {
                int from = find(st, s[i]);
                int to = s[i + 1] == f.max() ? u - 1 : find(st, s[i + 1] + 1) - 1;
                for (int j = from; j <= to; j++) {
                    bs[j][r >>> 6] |= 1L << r;
                }
            }
        }
        bits[k] = bs;
        wildcard[k] = wild;
    }

    private static int find(long[] st, long v) {
        int lo = 0;
        int hi = st.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (Long.compareUnsigned(st[mid], v) <= 0) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** Number of rules. */
    public int size() {
        return rules;
    }

    /** A scratch buffer for {@link #candidates}. */
    public long[] scratch() {
        return new long[words];
    }

    /** Fills out with the bitset of rules whose sets contain the packet's values. */
    public void candidates(long[] v, long[] out) {
        Arrays.fill(out, rules == 0 ? 0 : -1L);
        if (rules % 64 != 0) {
            out[words - 1] = (1L << (rules % 64)) - 1;
        }
        for (int k = 0; k < fields.length; k++) {
            long[] row = bits[k][find(starts[k], v[fields[k].ordinal()])];
            long[] w = wildcard[k];
            for (int i = 0; i < words; i++) {
                out[i] &= row[i] | w[i];
            }
        }
    }

    /** Next set bit at or after from, or -1. */
    public static int next(long[] set, int from) {
        int w = from >>> 6;
        if (w >= set.length) {
            return -1;
        }
        long word = set[w] & (-1L << (from & 63));
        while (true) {
            if (word != 0) {
                return (w << 6) + Long.numberOfTrailingZeros(word);
            }
            if (++w >= set.length) {
                return -1;
            }
            word = set[w];
        }
    }
}
