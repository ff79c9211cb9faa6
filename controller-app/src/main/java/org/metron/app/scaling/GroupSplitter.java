package org.metron.app.scaling;

import com.google.common.collect.ImmutableList;

import java.util.ArrayList;
import java.util.Collections;
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
        List<List<Integer>> units = new ArrayList<>();
        classes.forEach(c -> units.add(List.of(c)));
        return splitUnits(units, rates);
    }

    /**
     * As {@link #split}, over units that stay whole (a reply class with the forward classes it answers,
     * docs/scaling.md#replies): units by decreasing summed rate (ties by lowest class id), each to the half with
     * less rate so far. The half holding the lowest class id stays.
     *
     * @param units the group's classes, partitioned; each non-empty
     * @throws IllegalArgumentException for fewer than two units
     */
    public static Halves splitUnits(List<List<Integer>> units, Map<Integer, Double> rates) {
        if (units.size() < 2) {
            throw new IllegalArgumentException("classes " + units + " cannot split: they move only together");
        }
        List<List<Integer>> order = new ArrayList<>(units);
        order.sort(Comparator.<List<Integer>>comparingDouble(u -> -rate(u, rates))
                .thenComparing(u -> Collections.min(u)));
        List<Integer> a = new ArrayList<>();
        List<Integer> b = new ArrayList<>();
        double ra = 0;
        double rb = 0;
        for (List<Integer> u : order) {
            double r = rate(u, rates);
            if (ra < rb || ra == rb && a.size() <= b.size()) {
                a.addAll(u);
                ra += r;
            } else {
                b.addAll(u);
                rb += r;
            }
        }
        int lowest = units.stream().map(Collections::min).min(Comparator.naturalOrder()).get();
        return a.contains(lowest) ? new Halves(a, b, ra, rb) : new Halves(b, a, rb, ra);
    }

    private static double rate(List<Integer> unit, Map<Integer, Double> rates) {
        return unit.stream().mapToDouble(c -> Math.max(0, rates.getOrDefault(c, 0.0))).sum();
    }
}
