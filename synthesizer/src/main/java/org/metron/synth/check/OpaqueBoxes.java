package org.metron.synth.check;

import org.metron.synth.BlackBoxSpec;
import org.metron.synth.core.BlackBoxes;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.Synthesis;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The checker's stand-in for a chain's black boxes: each is an opaque function of the packet it is handed
 * (docs/blackbox.md) that drops some packets if it declares {@code mayDrop} and writes new values into some of
 * the fields it declares it rewrites (values at the decision boundaries of the chain after it, or any), and
 * nothing else. Which, is a hash of the packet and of a per-packet seed, never of the run: both sides of the
 * checker get the same function, so a difference after the box is a difference of the Click parts around it.
 * The destination MAC is left out of the hash: the synthesized side's packet carries the class tag there.
 */
final class OpaqueBoxes {
    /** One packet in this many is dropped by a box that may drop. */
    static final int DROP_ONE_IN = 8;

    private final Map<String, BlackBoxSpec> specs = new HashMap<>();
    private final Map<String, PacketGenerator> after = new HashMap<>();
    private final long seed;

    OpaqueBoxes(ChainModel model, Synthesis syn, long seed) {
        this.seed = seed;
        for (String box : syn.boxes()) {
            specs.put(box, model.blackBox(box));
            after.put(box, new PacketGenerator(seed, syn.afterBox(box).entries, List.of()));
        }
    }

    /** The boxes for one packet's runs (the same on both sides). */
    BlackBoxes forPacket(long choice) {
        return (nf, p) -> pass(nf, p, choice);
    }

    private boolean pass(String nf, Packet p, long choice) {
        BlackBoxSpec spec = specs.get(nf);
        if (spec == null) {
            return true;
        }
        long h = mix(seed ^ choice ^ nf.hashCode());
        for (Field f : Field.values()) {
            if (f != Field.ETH_DST) {
                h = mix(h ^ p.get(f) ^ f.ordinal());
            }
        }
        h = mix(h ^ java.util.Arrays.hashCode(p.payload));
        if (spec.mayDrop() && Long.remainderUnsigned(h, DROP_ONE_IN) == 0) {
            return false;
        }
        long[] v = p.v.clone();
        PacketGenerator gen = after.get(nf);
        for (Field f : spec.rewrittenFields()) {
            h = mix(h + f.ordinal());
            if ((h & 3) != 0) {
                v[f.ordinal()] = gen.pick(f, h >>> 2);
            }
        }
        Packet q = PacketGenerator.wellFormed(v, p.payload, p.check);
        System.arraycopy(q.v, 0, p.v, 0, p.v.length);
        return true;
    }

    /** SplitMix64's finalizer. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
