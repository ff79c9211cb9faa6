package org.metron.synth.hs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A conjunction of per-field interval sets (a hyper-rectangle-union per field; null = any value).
 * Immutable: every operation returns a new cube, or null when the result is empty.
 */
public final class Cube {
    /** The cube matching every packet. */
    public static final Cube ALL = new Cube(new long[Field.COUNT][]);

    private final long[][] sets;
    /** fields(), made on first use (cubes are immutable; a racing second copy is equal). */
    private List<Field> fields;

    private Cube(long[][] sets) {
        this.sets = sets;
    }

    /** The cube constraining one field; null if set is empty. */
    public static Cube of(Field f, long[] set) {
        return ALL.with(f, set);
    }

    /** Set for a field, or null if unconstrained. */
    public long[] get(Field f) {
        return sets[f.ordinal()];
    }

    /** True if no field is constrained. */
    public boolean isAll() {
        for (long[] s : sets) {
            if (s != null) {
                return false;
            }
        }
        return true;
    }

    /** This cube with field f further restricted to set; null if empty. */
    public Cube with(Field f, long[] set) {
        long[] cur = sets[f.ordinal()];
        long[] next = cur == null ? set : IntervalSet.intersect(cur, set);
        if (next.length == 0) {
            return null;
        }
        if (IntervalSet.isFull(next, f)) {
            next = null;
        }
        if (next == cur) {
            return this;
        }
        long[][] s = sets.clone();
        s[f.ordinal()] = next;
        return new Cube(s);
    }

    /** This cube with field f unconstrained. */
    public Cube without(Field f) {
        if (sets[f.ordinal()] == null) {
            return this;
        }
        long[][] s = sets.clone();
        s[f.ordinal()] = null;
        return new Cube(s);
    }

    /** this ∩ other; null if empty. */
    public Cube intersect(Cube other) {
        long[][] s = null;
        for (int i = 0; i < sets.length; i++) {
            long[] b = other.sets[i];
            if (b == null) {
                continue;
            }
            long[] a = sets[i];
            long[] r = a == null ? b : IntervalSet.intersect(a, b);
            if (r.length == 0) {
                return null;
            }
            if (r != a) {
                if (s == null) {
                    s = sets.clone();
                }
                s[i] = r;
            }
        }
        return s == null ? this : new Cube(s);
    }

    /** True if the packet's field values lie in every constrained set. */
    public boolean matches(long[] values) {
        for (int i = 0; i < sets.length; i++) {
            long[] s = sets[i];
            if (s != null && !IntervalSet.contains(s, values[i])) {
                return false;
            }
        }
        return true;
    }

    /** True if this cube and other share a packet. */
    public boolean overlaps(Cube other) {
        for (int i = 0; i < sets.length; i++) {
            long[] a = sets[i];
            long[] b = other.sets[i];
            if (a != null && b != null && !IntervalSet.overlaps(a, b)) {
                return false;
            }
        }
        return true;
    }

    /** True if every packet of this cube is in other. */
    public boolean subsetOf(Cube other) {
        for (int i = 0; i < sets.length; i++) {
            long[] b = other.sets[i];
            if (b == null) {
                continue;
            }
            long[] a = sets[i];
            if (a == null || !IntervalSet.subset(a, b)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The complement as a list of pairwise disjoint cubes:
     * ¬(f1∈S1 ∧ f2∈S2 ∧ ...) = f1∉S1 ∨ (f1∈S1 ∧ f2∉S2) ∨ ...
     */
    public List<Cube> complement() {
        List<Cube> out = new ArrayList<>();
        Cube prefix = ALL;
        for (int i = 0; i < sets.length; i++) {
            long[] s = sets[i];
            if (s == null) {
                continue;
            }
            Field f = Field.of(i);
            Cube c = prefix.with(f, IntervalSet.complement(s, f));
            if (c != null) {
                out.add(c);
            }
            prefix = prefix.with(f, s);
        }
        return out;
    }

    /** Constrained fields, in field order. */
    public List<Field> fields() {
        List<Field> f = fields;
        if (f == null) {
            List<Field> out = new ArrayList<>();
            for (int i = 0; i < sets.length; i++) {
                if (sets[i] != null) {
                    out.add(Field.of(i));
                }
            }
            f = java.util.Collections.unmodifiableList(out);
            fields = f;
        }
        return f;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Cube && Arrays.deepEquals(sets, ((Cube) o).sets);
    }

    @Override
    public int hashCode() {
        return Arrays.deepHashCode(sets);
    }

    @Override
    public String toString() {
        return CubeText.format(this);
    }
}
