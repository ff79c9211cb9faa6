package org.metron.synth.hs;

import java.util.ArrayList;
import java.util.List;

/** Splits unsigned intervals into aligned value/mask blocks (prefixes), as TCAMs and OpenFlow need. */
public final class Prefixes {
    private Prefixes() {
    }

    /** A block: value with the low {@code 64 - len} (of the field width) bits free. */
    public static final class Block {
        public final long value;
        /** Prefix length within the field width. */
        public final int length;

        Block(long value, int length) {
            this.value = value;
            this.length = length;
        }
    }

    /** Minimal prefix cover of [lo, hi] within a width-bit field (at most 2*width blocks). */
    public static List<Block> of(long lo, long hi, int width) {
        List<Block> out = new ArrayList<>();
        long cur = lo;
        while (true) {
            // largest aligned block starting at cur that stays within hi
            int free = cur == 0 ? width : Math.min(Long.numberOfTrailingZeros(cur), width);
            while (free > 0) {
                long last = cur + ((free == 64 ? -1L : (1L << free) - 1));
                if (Long.compareUnsigned(last, hi) <= 0 && Long.compareUnsigned(last, cur) >= 0) {
                    break;
                }
                free--;
            }
            out.add(new Block(cur, width - free));
            long last = free == 64 ? -1L : cur + ((1L << free) - 1);
            if (last == hi) {
                return out;
            }
            cur = last + 1;
        }
    }

    /** Prefix cover of a whole interval set. */
    public static List<Block> of(long[] set, int width) {
        List<Block> out = new ArrayList<>();
        for (int i = 0; i < set.length; i += 2) {
            out.addAll(of(set[i], set[i + 1], width));
        }
        return out;
    }

    /** Number of blocks needed for a set, without building them. */
    public static int count(long[] set, int width) {
        int n = 0;
        for (int i = 0; i < set.length; i += 2) {
            n += of(set[i], set[i + 1], width).size();
        }
        return n;
    }
}
