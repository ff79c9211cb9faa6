package org.metron.app.api;

import java.util.Locale;
import java.util.Optional;

/**
 * A slice of a traffic class: its packets whose L4 (TCP/UDP) source port has some bits, {@code port & mask ==
 * value} (docs/scaling.md#class-split). Scaling divides a heavy class between cores by such bits: each half
 * of a split slice adds one bit to the mask. {@link #WHOLE} (mask 0) is the whole class. Immutable.
 */
public final class ClassSlice {
    /** The whole class. */
    public static final ClassSlice WHOLE = new ClassSlice(0, 0);
    /** Bits of a port. */
    public static final int BITS = 16;

    private final int mask;
    private final int value;

    /**
     * @throws IllegalArgumentException for a mask beyond 16 bits or value bits outside the mask
     */
    public ClassSlice(int mask, int value) {
        if ((mask & ~0xffff) != 0 || (value & ~mask) != 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "source-port slice mask 0x%x value 0x%x:"
                    + " need a 16-bit mask and value bits within it", mask, value));
        }
        this.mask = mask;
        this.value = value;
    }

    public int mask() {
        return mask;
    }

    public int value() {
        return value;
    }

    public boolean isWhole() {
        return mask == 0;
    }

    /** Whether a packet with this source port belongs to the slice. */
    public boolean contains(int sport) {
        return (sport & mask) == value;
    }

    /** Whether bit {@code bit} already divides this slice. */
    public boolean uses(int bit) {
        return (mask >> bit & 1) != 0;
    }

    /**
     * The half of this slice whose source ports have bit {@code bit} set ({@code one}) or clear.
     *
     * @throws IllegalArgumentException for a bit outside 0..15 or one the slice already uses
     */
    public ClassSlice half(int bit, boolean one) {
        if (bit < 0 || bit >= BITS || uses(bit)) {
            throw new IllegalArgumentException("cannot divide slice " + this + " by source-port bit " + bit);
        }
        return new ClassSlice(mask | 1 << bit, value | (one ? 1 << bit : 0));
    }

    /** Whether no port is in both slices. */
    public boolean disjoint(ClassSlice o) {
        return ((value ^ o.value) & mask & o.mask) != 0;
    }

    /** The slice the two halves of which are this one and {@code o} (siblings: same mask, one bit apart), if any. */
    public Optional<ClassSlice> union(ClassSlice o) {
        int diff = value ^ o.value;
        if (mask != o.mask || Integer.bitCount(diff) != 1) {
            return Optional.empty();
        }
        return Optional.of(new ClassSlice(mask & ~diff, value & ~diff));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClassSlice && ((ClassSlice) o).mask == mask && ((ClassSlice) o).value == value;
    }

    @Override
    public int hashCode() {
        return mask * 65537 + value;
    }

    /** "sport&0x0003=0x0001", or "whole". */
    @Override
    public String toString() {
        return isWhole() ? "whole" : String.format(Locale.ROOT, "sport&0x%04x=0x%04x", mask, value);
    }
}
