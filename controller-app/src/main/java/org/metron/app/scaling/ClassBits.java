package org.metron.app.scaling;

import org.metron.app.api.ClassSlice;

import java.util.Arrays;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * How a class's packets spread over the bits of their L4 source port, as one group measured them: of {@link
 * #packets()} TCP/UDP packets, how many had each bit set (the agent's ClassStats.sport_ones). What the policy
 * chooses a bit to divide the class by (docs/scaling.md#class-split). Immutable.
 */
public final class ClassBits {
    private final ClassSlice slice;
    private final long packets;
    private final long[] ones;

    /**
     * @param slice   the part of the class the group holds (bits it already uses cannot divide it again)
     * @param packets TCP/UDP packets counted
     * @param ones    per bit 0..15, how many of them had it set
     */
    public ClassBits(ClassSlice slice, long packets, long[] ones) {
        if (ones.length != ClassSlice.BITS || packets < 0) {
            throw new IllegalArgumentException("need " + ClassSlice.BITS + " bit counts and packets >= 0, got "
                    + ones.length + " and " + packets);
        }
        this.slice = slice;
        this.packets = packets;
        this.ones = ones.clone();
    }

    public ClassSlice slice() {
        return slice;
    }

    public long packets() {
        return packets;
    }

    /** The share of the packets with bit {@code bit} set; 0 without packets. */
    public double share(int bit) {
        return packets == 0 ? 0 : Math.min(1.0, ones[bit] / (double) packets);
    }

    /**
     * The bit the slice does not use yet whose set/clear halves are closest to equal (lowest bit on ties): the
     * packets with it set move, the others stay. Empty without packets or when every bit is used.
     */
    public OptionalInt bestBit() {
        int best = -1;
        for (int k = 0; k < ClassSlice.BITS; k++) {
            if (packets > 0 && !slice.uses(k)
                    && (best < 0 || Math.abs(share(k) - 0.5) < Math.abs(share(best) - 0.5))) {
                best = k;
            }
        }
        return best < 0 ? OptionalInt.empty() : OptionalInt.of(best);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s over %d packets, bit shares %s", slice, packets,
                Arrays.toString(Arrays.stream(ones).mapToDouble(o -> packets == 0 ? 0 : o / (double) packets)
                        .map(x -> Math.round(x * 100) / 100.0).toArray()));
    }
}
