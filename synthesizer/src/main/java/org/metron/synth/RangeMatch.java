package org.metron.synth;

/**
 * An inclusive range match on a small unsigned field (L4 port, TOS, TTL, ICMP type, TCP flags).
 * Targets that need value/mask (see {@link TargetProfile#rangesAsPrefixes()}) only ever receive ranges for
 * which {@link #isMaskable()} holds; the compiler splits other ranges into several rules. Immutable.
 */
public final class RangeMatch {
    private final int lo;
    private final int hi;
    private final int width;

    private RangeMatch(int lo, int hi, int width) {
        this.lo = lo;
        this.hi = hi;
        this.width = width;
    }

    /**
     * Creates a range.
     *
     * @param lo    lowest value
     * @param hi    highest value, &ge; lo
     * @param width field width in bits (16 for ports, 8 for TOS/TTL)
     * @return the range
     */
    public static RangeMatch of(int lo, int hi, int width) {
        if (lo < 0 || hi < lo || width < 1 || width > 31 || hi >= (1 << width)) {
            throw new IllegalArgumentException("bad range " + lo + "-" + hi + " for a " + width + "-bit field");
        }
        return new RangeMatch(lo, hi, width);
    }

    /** Exact value match. */
    public static RangeMatch exact(int value, int width) {
        return of(value, value, width);
    }

    public int lo() {
        return lo;
    }

    public int hi() {
        return hi;
    }

    public int width() {
        return width;
    }

    /** True if the range is one value/mask pair (an aligned power-of-two block). */
    public boolean isMaskable() {
        int size = hi - lo + 1;
        return Integer.bitCount(size) == 1 && (lo & (size - 1)) == 0;
    }

    /** Value of the value/mask form; only meaningful when {@link #isMaskable()}. */
    public int value() {
        return lo;
    }

    /** Mask of the value/mask form; only meaningful when {@link #isMaskable()}. */
    public int mask() {
        int full = (1 << width) - 1;
        return full & ~(hi - lo);
    }

    @Override
    public String toString() {
        return lo == hi ? Integer.toString(lo) : lo + "-" + hi;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RangeMatch && ((RangeMatch) o).lo == lo && ((RangeMatch) o).hi == hi
                && ((RangeMatch) o).width == width;
    }

    @Override
    public int hashCode() {
        return (lo * 31 + hi) * 31 + width;
    }
}
