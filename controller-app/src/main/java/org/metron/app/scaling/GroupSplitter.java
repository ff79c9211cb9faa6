package org.metron.app.scaling;

import com.google.common.collect.ImmutableList;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Divides a group's traffic classes in two halves of balanced measured rate (docs/scaling.md#split). Classes
 * are the unit: a class, and so a flow, is never divided between cores. Pure.
 */
public final class GroupSplitter {

    /** The two halves: {@link #keep()} stays on the group's core, {@link #move()} gets the new tag and core. */
    public static final class Halves {
        private final List<Integer> keep;
        private final List<Integer> move;
        private final double keepRate;
        private final double moveRate;

        Halves(List<Integer> keep, List<Integer> move, double keepRate, double moveRate) {
            this.keep = ImmutableList.sortedCopyOf(keep);
            this.move = ImmutableList.sortedCopyOf(move);
            this.keepRate = keepRate;
            this.moveRate = moveRate;
        }

        public List<Integer> keep() {
            return keep;
        }

        public List<Integer> move() {
            return move;
        }

        public double keepRate() {
            return keepRate;
        }

        public double moveRate() {
            return moveRate;
        }
    }

    private GroupSplitter() {
    }

    /**
     * Longest-processing-time first: classes by decreasing rate, each to the half with less rate so far (fewer
     * classes on ties, so idle classes spread evenly). Deterministic: equal rates are ordered by class id. The
     * half holding the lowest class id stays.
     *
     * @param classes the group's classes
     * @param rates   measured packets/s per class; absent = 0
     * @throws IllegalArgumentException for fewer than two classes (a single class cannot split)
     */
    public static Halves split(List<Integer> classes, Map<Integer, Double> rates) {
        if (classes.size() < 2) {
            throw new IllegalArgumentException("a group of " + classes.size() + " class(es) " + classes
                    + " cannot split: classes are never divided between cores");
        }
        List<Integer> order = new ArrayList<>(classes);
        order.sort(Comparator.<Integer>comparingDouble(c -> -rates.getOrDefault(c, 0.0))
                .thenComparing(Comparator.naturalOrder()));
        List<Integer> a = new ArrayList<>();
        List<Integer> b = new ArrayList<>();
        double ra = 0;
        double rb = 0;
        for (int c : order) {
            double r = Math.max(0, rates.getOrDefault(c, 0.0));
            if (ra < rb || ra == rb && a.size() <= b.size()) {
                a.add(c);
                ra += r;
            } else {
                b.add(c);
                rb += r;
            }
        }
        int lowest = classes.stream().min(Comparator.naturalOrder()).get();
        return a.contains(lowest) ? new Halves(a, b, ra, rb) : new Halves(b, a, rb, ra);
    }
}
