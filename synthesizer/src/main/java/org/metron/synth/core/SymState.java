package org.metron.synth.core;

import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Symbolic state of a set of packets walking the chain: a filter over the ORIGINAL header values, plus what
 * the elements passed so far did (current value sets of written fields, TTL decrements, stripped bytes,
 * stateful steps). Immutable: every change returns a new state.
 */
public final class SymState {
    /** Packets (by original header values) this state stands for. */
    public final Cube filter;
    /** Per field: null = still the original value; else the set of values the field may now hold. */
    private final long[][] cur;
    /** Per field: true if the current value came from a stateful element (so it is not a stateless write). */
    private final boolean[] stateful;
    public final int ttlDec;
    public final int stripped;
    public final boolean ipMarked;
    public final List<StatefulStep> steps;
    /** True for replies (from the reply ingress); false for forward traffic, each packet a new flow's first. */
    public final boolean reply;

    private SymState(Cube filter, long[][] cur, boolean[] stateful, int ttlDec, int stripped, boolean ipMarked,
                     List<StatefulStep> steps, boolean reply) {
        this.reply = reply;
        this.filter = filter;
        this.cur = cur;
        this.stateful = stateful;
        this.ttlDec = ttlDec;
        this.stripped = stripped;
        this.ipMarked = ipMarked;
        this.steps = steps;
    }

    /** Thrown when a test on a field written with an undetermined value (allocated port, LB pool) splits it. */
    public static final class Undetermined extends RuntimeException {
        private static final long serialVersionUID = 1L;
        public final Field field;

        Undetermined(Field field) {
            super(null, null, false, false);
            this.field = field;
        }
    }

    /** All packets entering at an ingress (Ethernet frames, nothing done yet); reply = the reply ingress. */
    public static SymState initial(Cube filter, boolean reply) {
        return new SymState(filter, new long[Field.COUNT][], new boolean[Field.COUNT], 0, 0, false, List.of(),
                reply);
    }

    /** Current value set of f, or null if f still holds the original value. */
    public long[] current(Field f) {
        return cur[f.ordinal()];
    }

    /** True if f's current value was written by a stateful element. */
    public boolean statefulWrite(Field f) {
        return stateful[f.ordinal()];
    }

    /**
     * Restricts to packets whose CURRENT headers lie in c (c is over current values).
     *
     * @return the narrowed state, or null if no packet is left
     * @throws Undetermined if c splits the possible values of a field written by a stateful element
     */
    public SymState restrict(Cube c) {
        Cube f = filter;
        for (Field fd : c.fields()) {
            long[] want = c.get(fd);
            long[] now = cur[fd.ordinal()];
            if (now != null) {
                long[] both = IntervalSet.intersect(now, want);
                if (both.length == 0) {
                    return null;
                }
                if (!java.util.Arrays.equals(both, now)) {
                    throw new Undetermined(fd);
                }
                continue;
            }
            if (fd == Field.TTL && ttlDec > 0) {
                want = shift(want, ttlDec);
            }
            f = f.with(fd, want);
            if (f == null) {
                return null;
            }
        }
        return f == filter ? this : new SymState(f, cur, stateful, ttlDec, stripped, ipMarked, steps, reply);
    }

    private static long[] shift(long[] s, int by) {
        long[] out = new long[s.length];
        int n = 0;
        for (int i = 0; i < s.length; i += 2) {
            long lo = s[i] + by;
            long hi = Math.min(s[i + 1] + by, Field.TTL.max());
            if (lo <= hi) {
                out[n++] = lo;
                out[n++] = hi;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /** True if restricting by c would leave this state unchanged (c holds for every packet of the state). */
    public boolean covers(SymState narrowed) {
        return narrowed == this;
    }

    /** Writes a constant (stateless) or a value set (stateful) to a field. */
    public SymState write(Field f, long[] values, boolean byStatefulElement) {
        long[][] c = cur.clone();
        boolean[] s = stateful.clone();
        c[f.ordinal()] = values;
        s[f.ordinal()] = byStatefulElement;
        return new SymState(filter, c, s, ttlDec, stripped, ipMarked, steps, reply);
    }

    public SymState decTtl() {
        return new SymState(filter, cur, stateful, ttlDec + 1, stripped, ipMarked, steps, reply);
    }

    public SymState strip(int bytes) {
        return new SymState(filter, cur, stateful, ttlDec, stripped + bytes, ipMarked, steps, reply);
    }

    /** The same packets at the entry of the next NF: its own elements must mark the IP header again. */
    public SymState withIpUnmarked() {
        return new SymState(filter, cur, stateful, ttlDec, stripped, false, steps, reply);
    }

    public SymState markIp() {
        return new SymState(filter, cur, stateful, ttlDec, stripped, true, steps, reply);
    }

    public SymState step(StatefulStep st) {
        List<StatefulStep> n = new ArrayList<>(steps);
        n.add(st);
        return new SymState(filter, cur, stateful, ttlDec, stripped, ipMarked, Collections.unmodifiableList(n), reply);
    }
}
