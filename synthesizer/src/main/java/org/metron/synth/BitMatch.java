package org.metron.synth;

/**
 * A value/mask match on a bit field (TCP flags): matches when {@code (field & mask) == value}. Immutable.
 */
public final class BitMatch {
    private final int value;
    private final int mask;

    private BitMatch(int value, int mask) {
        this.value = value & mask;
        this.mask = mask;
    }

    /** Creates a match; bits of value outside mask are ignored. */
    public static BitMatch of(int value, int mask) {
        return new BitMatch(value, mask);
    }

    public int value() {
        return value;
    }

    public int mask() {
        return mask;
    }

    @Override
    public String toString() {
        return String.format("0x%02x/0x%02x", value, mask);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BitMatch && ((BitMatch) o).value == value && ((BitMatch) o).mask == mask;
    }

    @Override
    public int hashCode() {
        return value * 257 + mask;
    }
}
