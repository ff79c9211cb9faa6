package org.metron.synth.filter;

import org.metron.synth.SynthesisException;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed IPFilter/IPClassifier pattern. Two independent meanings: {@link #eval} on a concrete packet (what
 * the reference interpreter uses, straight from the syntax tree) and {@link #dnf} as a list of cubes (what
 * synthesis uses). The equivalence checker compares the two worlds, so they are kept separate on purpose.
 */
public abstract class Expr {
    /** Largest DNF a single pattern may expand to before synthesis refuses it. */
    static final int MAX_DNF = 4096;

    /** True if the packet (field values) matches. */
    public abstract boolean eval(long[] v);

    /** Disjunctive normal form: the pattern as a union of cubes (possibly overlapping). */
    public abstract List<Cube> dnf();

    /**
     * An over-approximation of the values of f a matching packet may have, computed on the syntax tree alone
     * (negation gives the full domain). Used to index rules for the reference interpreter.
     */
    public abstract long[] bounds(Field f);

    /** The top-level alternatives of the pattern (a or b or c gives a, b, c); their union is the pattern. */
    public List<Expr> alternatives() {
        return List.of(this);
    }

    /** Matches packets whose field f is in set. */
    public static Expr atom(Field f, long[] set) {
        return new Atom(f, set);
    }

    public static Expr and(Expr a, Expr b) {
        return new And(a, b);
    }

    public static Expr or(Expr a, Expr b) {
        return new Or(a, b);
    }

    public static Expr not(Expr a) {
        return new Not(a);
    }

    public static Expr constant(boolean b) {
        return b ? TRUE : FALSE;
    }

    static final Expr TRUE = new Const(true);
    static final Expr FALSE = new Const(false);

    private static final class Const extends Expr {
        final boolean b;

        Const(boolean b) {
            this.b = b;
        }

        @Override
        public boolean eval(long[] v) {
            return b;
        }

        @Override
        public List<Cube> dnf() {
            return b ? List.of(Cube.ALL) : List.of();
        }

        @Override
        public long[] bounds(Field f) {
            return b ? IntervalSet.full(f) : IntervalSet.EMPTY;
        }

        @Override
        public String toString() {
            return Boolean.toString(b);
        }
    }

    private static final class Atom extends Expr {
        final Field f;
        final long[] set;

        Atom(Field f, long[] set) {
            this.f = f;
            this.set = set;
        }

        @Override
        public boolean eval(long[] v) {
            return IntervalSet.contains(set, v[f.ordinal()]);
        }

        @Override
        public List<Cube> dnf() {
            Cube c = Cube.of(f, set);
            return c == null ? List.of() : List.of(c);
        }

        @Override
        public long[] bounds(Field g) {
            return g == f ? set : IntervalSet.full(g);
        }

        @Override
        public String toString() {
            return f + " in " + IntervalSet.toString(set);
        }
    }

    private static final class And extends Expr {
        final Expr a;
        final Expr b;

        And(Expr a, Expr b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public boolean eval(long[] v) {
            return a.eval(v) && b.eval(v);
        }

        @Override
        public List<Cube> dnf() {
            return product(a.dnf(), b.dnf());
        }

        @Override
        public long[] bounds(Field f) {
            return IntervalSet.intersect(a.bounds(f), b.bounds(f));
        }

        @Override
        public String toString() {
            return "(" + a + " and " + b + ")";
        }
    }

    private static final class Or extends Expr {
        final Expr a;
        final Expr b;

        Or(Expr a, Expr b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public boolean eval(long[] v) {
            return a.eval(v) || b.eval(v);
        }

        @Override
        public List<Expr> alternatives() {
            List<Expr> out = new ArrayList<>(a.alternatives());
            out.addAll(b.alternatives());
            return out;
        }

        @Override
        public List<Cube> dnf() {
            List<Cube> out = new ArrayList<>(a.dnf());
            out.addAll(b.dnf());
            check(out.size());
            return out;
        }

        @Override
        public long[] bounds(Field f) {
            return IntervalSet.union(a.bounds(f), b.bounds(f));
        }

        @Override
        public String toString() {
            return "(" + a + " or " + b + ")";
        }
    }

    private static final class Not extends Expr {
        final Expr a;

        Not(Expr a) {
            this.a = a;
        }

        @Override
        public boolean eval(long[] v) {
            return !a.eval(v);
        }

        @Override
        public List<Cube> dnf() {
            // ¬(c1 ∨ c2 ∨ ...) = ¬c1 ∧ ¬c2 ∧ ...; each ¬ci is a disjoint union of cubes
            List<Cube> acc = List.of(Cube.ALL);
            for (Cube c : a.dnf()) {
                acc = product(acc, c.complement());
                if (acc.isEmpty()) {
                    break;
                }
            }
            return acc;
        }

        @Override
        public long[] bounds(Field f) {
            return IntervalSet.full(f);
        }

        @Override
        public String toString() {
            return "not " + a;
        }
    }

    static List<Cube> product(List<Cube> x, List<Cube> y) {
        List<Cube> out = new ArrayList<>();
        for (Cube p : x) {
            for (Cube q : y) {
                Cube r = p.intersect(q);
                if (r != null) {
                    out.add(r);
                }
            }
            check(out.size());
        }
        return out;
    }

    private static void check(int n) {
        if (n > MAX_DNF) {
            throw new SynthesisException("unsupported construct: pattern expands to more than " + MAX_DNF
                    + " conjunctions");
        }
    }
}
