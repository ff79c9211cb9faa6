package org.metron.synth.core;

import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Flow tables of concrete runs, per rewriter element (by {@code nf/element} id), as the equivalence checker
 * carries them from a forward packet to its reply: a rewrite records the reply tuple it expects and the tuple
 * a reply is restored to. The reference interpreter and the synthesized-side evaluator each keep their own;
 * the same forward packet must leave both able to answer the same replies.
 */
public final class FlowState {
    /** A reply's restored addresses and ports, and the input spec that made the mapping and its reply output. */
    public static final class Mapping {
        final long[] restored;
        public final int spec;
        public final int output;

        Mapping(long[] restored, int spec, int output) {
            this.restored = restored;
            this.spec = spec;
            this.output = output;
        }
    }

    private final Map<String, Map<Key, Mapping>> tables = new HashMap<>();

    /** A packet's 5-tuple as a hash key: proto, src hi/lo, dst hi/lo, sport, dport (IPv4 in the lo words). */
    private static final class Key {
        final long[] t;

        Key(long[] t) {
            this.t = t;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && Arrays.equals(t, ((Key) o).t);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(t);
        }
    }

    /** The tuple of a packet: {family + proto, srcHi, srcLo, dstHi, dstLo, sport, dport}. */
    public static long[] tuple(Packet p) {
        boolean v6 = p.isIp6();
        return new long[] {(v6 ? 0x600 : 0x400) | p.get(Field.IP_PROTO), v6 ? p.get(Field.IP6_SRC_HI) : 0,
            v6 ? p.get(Field.IP6_SRC_LO) : p.get(Field.IP4_SRC), v6 ? p.get(Field.IP6_DST_HI) : 0,
            v6 ? p.get(Field.IP6_DST_LO) : p.get(Field.IP4_DST), p.get(Field.L4_SRC), p.get(Field.L4_DST)};
    }

    private static long[] reversed(long[] t) {
        return new long[] {t[0], t[3], t[4], t[1], t[2], t[6], t[5]};
    }

    /**
     * Records a forward rewrite by input spec {@code spec} of element {@code where}: replies to {@code mapped}
     * (the packet after the rewrite) are restored to the reverse of {@code orig} and leave at {@code replyOutput}.
     */
    public void record(String where, long[] orig, long[] mapped, int spec, int replyOutput) {
        tables.computeIfAbsent(where, k -> new HashMap<>()).put(new Key(reversed(mapped)),
                new Mapping(reversed(orig), spec, replyOutput));
    }

    /** The mapping a reply packet hits at element {@code where}, or null. */
    public Mapping lookup(String where, Packet reply) {
        Map<Key, Mapping> t = tables.get(where);
        return t == null ? null : t.get(new Key(tuple(reply)));
    }

    /** Rewrites a reply packet to its mapping's restored tuple. */
    public static void restore(Packet p, Mapping m) {
        long[] r = m.restored;
        if (p.isIp6()) {
            p.set(Field.IP6_SRC_HI, r[1]);
            p.set(Field.IP6_SRC_LO, r[2]);
            p.set(Field.IP6_DST_HI, r[3]);
            p.set(Field.IP6_DST_LO, r[4]);
        } else {
            p.set(Field.IP4_SRC, r[2]);
            p.set(Field.IP4_DST, r[4]);
        }
        p.set(Field.L4_SRC, r[5]);
        p.set(Field.L4_DST, r[6]);
    }
}
