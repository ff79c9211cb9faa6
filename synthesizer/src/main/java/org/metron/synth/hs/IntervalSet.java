package org.metron.synth.hs;

import java.util.Arrays;

/**
 * Sets of unsigned 64-bit values as sorted, disjoint, non-adjacent inclusive intervals packed in a
 * {@code long[]} (lo0, hi0, lo1, hi1, ...). Static helpers over plain arrays: header-space code creates
 * millions of these, so no wrapper objects. Arrays are never mutated after creation.
 */
public final class IntervalSet {
    /** The empty set. */
    public static final long[] EMPTY = new long[0];

    private IntervalSet() {
    }

    /** {lo..hi}, unsigned; empty if lo > hi. */
    public static long[] range(long lo, long hi) {
        return Long.compareUnsigned(lo, hi) > 0 ? EMPTY : new long[] {lo, hi};
    }

    /** {v}. */
    public static long[] point(long v) {
        return new long[] {v, v};
    }

    /** The whole domain of a field. */
    public static long[] full(Field f) {
        return new long[] {0, f.max()};
    }

    /** True if s covers f's whole domain. */
    public static boolean isFull(long[] s, Field f) {
        return s.length == 2 && s[0] == 0 && s[1] == f.max();
    }

    /** Unsigned membership test (binary search). */
    public static boolean contains(long[] s, long v) {
        int lo = 0;
        int hi = s.length / 2 - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(v, s[2 * mid]) < 0) {
                hi = mid - 1;
            } else if (Long.compareUnsigned(v, s[2 * mid + 1]) > 0) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** a ∩ b. */
    public static long[] intersect(long[] a, long[] b) {
        if (a.length == 2 && b.length == 2) {
            long lo = Long.compareUnsigned(a[0], b[0]) >= 0 ? a[0] : b[0];
            long hi = Long.compareUnsigned(a[1], b[1]) <= 0 ? a[1] : b[1];
            if (lo == a[0] && hi == a[1]) {
                return a;
            }
            if (lo == b[0] && hi == b[1]) {
                return b;
            }
            return range(lo, hi);
        }
        long[] out = new long[a.length + b.length];
        int n = 0;
        int i = 0;
        int j = 0;
        while (i < a.length && j < b.length) {
            long lo = Long.compareUnsigned(a[i], b[j]) >= 0 ? a[i] : b[j];
            long hi = Long.compareUnsigned(a[i + 1], b[j + 1]) <= 0 ? a[i + 1] : b[j + 1];
            if (Long.compareUnsigned(lo, hi) <= 0) {
                out[n++] = lo;
                out[n++] = hi;
            }
            if (Long.compareUnsigned(a[i + 1], b[j + 1]) < 0) {
                i += 2;
            } else {
                j += 2;
            }
        }
        if (n == 0) {
            return EMPTY;
        }
        // callers keep the operand when nothing was cut off (Cube.with: no new cube)
        if (n == a.length && Arrays.equals(out, 0, n, a, 0, n)) {
            return a;
        }
        if (n == b.length && Arrays.equals(out, 0, n, b, 0, n)) {
            return b;
        }
        return Arrays.copyOf(out, n);
    }

    /** True if a ∩ b is not empty (no allocation). */
    public static boolean overlaps(long[] a, long[] b) {
        int i = 0;
        int j = 0;
        while (i < a.length && j < b.length) {
            if (Long.compareUnsigned(a[i + 1], b[j]) < 0) {
                i += 2;
            } else if (Long.compareUnsigned(b[j + 1], a[i]) < 0) {
                j += 2;
            } else {
                return true;
            }
        }
        return false;
    }

    /** a ∪ b. */
    public static long[] union(long[] a, long[] b) {
        long[] all = new long[a.length + b.length];
        int n = 0;
        int i = 0;
        int j = 0;
        while (i < a.length || j < b.length) {
            long lo;
            long hi;
            if (j >= b.length || (i < a.length && Long.compareUnsigned(a[i], b[j]) <= 0)) {
                lo = a[i];
                hi = a[i + 1];
                i += 2;
            } else {
                lo = b[j];
                hi = b[j + 1];
                j += 2;
            }
            if (n > 0 && (Long.compareUnsigned(lo, all[n - 1]) <= 0 || all[n - 1] != -1L && lo == all[n - 1] + 1)) {
                if (Long.compareUnsigned(hi, all[n - 1]) > 0) {
                    all[n - 1] = hi;
                }
            } else {
                all[n++] = lo;
                all[n++] = hi;
            }
        }
        return Arrays.copyOf(all, n);
    }

    /** Complement of s within f's domain. */
    public static long[] complement(long[] s, Field f) {
        long max = f.max();
        long[] out = new long[s.length + 2];
        int n = 0;
        long next = 0;
        boolean open = true;
        for (int i = 0; i < s.length; i += 2) {
            if (Long.compareUnsigned(s[i], next) > 0) {
                out[n++] = next;
                out[n++] = s[i] - 1;
            }
            if (s[i + 1] == max) {
                open = false;
                break;
            }
            next = s[i + 1] + 1;
        }
        if (open) {
            out[n++] = next;
            out[n++] = max;
        }
        return Arrays.copyOf(out, n);
    }

    /** True if a ⊆ b. */
    public static boolean subset(long[] a, long[] b) {
        return Arrays.equals(intersect(a, b), a);
    }

    /** Number of intervals. */
    public static int intervals(long[] s) {
        return s.length / 2;
    }

    /** Text form {@code [lo-hi, v, ...]} in decimal. */
    public static String toString(long[] s) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < s.length; i += 2) {
            sb.append(i > 0 ? ", " : "").append(Long.toUnsignedString(s[i]));
            if (s[i] != s[i + 1]) {
                sb.append('-').append(Long.toUnsignedString(s[i + 1]));
            }
        }
        return sb.append(']').toString();
    }
}
