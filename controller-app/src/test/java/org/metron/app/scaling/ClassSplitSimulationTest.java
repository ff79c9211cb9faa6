package org.metron.app.scaling;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ClassSlice;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * The decisions of class splitting on a simulated server of 16 cores (docs/scaling.md#class-split): the demo
 * chain's one stateful class, carried by thousands of flows, is divided by source-port bits as the load grows,
 * up to 16 slices on 16 cores with balanced load, and joined back to the whole class on one core when the load
 * falls. The policy is the real one; what is simulated is the data plane: each group's load is the summed rate
 * of the flows its slice holds, and its bit counts are what the agent's ClassStats.sport_ones would count.
 */
public class ClassSplitSimulationTest {
    private static final ChainId C = ChainId.of("demo");
    private static final int CORES = 16;
    private static final double CORE_PPS = 1_000_000;   // what one core forwards at load 1.0
    private static final long STEP_MS = 50;             // the load monitor's report interval

    /** One flow: its source port and its packet rate. */
    private static final class Flow {
        final int sport;
        final double pps;

        Flow(int sport, double pps) {
            this.sport = sport;
            this.pps = pps;
        }
    }

    /** One placed group of the simulated chain: its core and the slice of class 0 it holds. */
    private static final class Group {
        final String id;
        final int core;
        ClassSlice slice;

        Group(String id, int core, ClassSlice slice) {
            this.id = id;
            this.core = core;
            this.slice = slice;
        }
    }

    private final ScalingPolicy policy = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
    private final List<Group> groups = new ArrayList<>(List.of(new Group("g0", 0, ClassSlice.WHOLE)));
    private final List<ScalingDecision> decisions = new ArrayList<>();
    private long now;
    private int children;

    /** Flows with ephemeral source ports (random, as clients pick them) and rates spread over 0.5-1.5x. */
    private static List<Flow> flows(int n, double totalPps, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Flow> out = new ArrayList<>();
        double[] w = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            w[i] = 0.5 + r.nextDouble();
            sum += w[i];
        }
        for (int i = 0; i < n; i++) {
            out.add(new Flow(32768 + r.nextInt(28232), totalPps * w[i] / sum));
        }
        return out;
    }

    private double rate(Group g, List<Flow> flows) {
        return flows.stream().filter(f -> g.slice.contains(f.sport)).mapToDouble(f -> f.pps).sum();
    }

    /** What one report of the agent says about a group: load, class rate and source-port bit counts. */
    private GroupLoad measure(Group g, List<Flow> flows) {
        double pps = rate(g, flows);
        long packets = 0;
        long[] ones = new long[ClassSlice.BITS];
        for (Flow f : flows) {
            if (g.slice.contains(f.sport)) {
                long n = Math.round(f.pps * STEP_MS / 1000.0);
                packets += n;
                for (int k = 0; k < ClassSlice.BITS; k++) {
                    ones[k] += (f.sport >> k & 1) * n;
                }
            }
        }
        return new GroupLoad(g.id, g.core, Math.min(1.0, pps / CORE_PPS), Map.of(0, pps), "napt", false,
                g.slice.isWhole() ? Map.of() : Map.of(0, g.slice), Map.of(0, new ClassBits(g.slice, packets, ones)));
    }

    /** One report interval: the policy sees every group, and its decision (if any) is carried out at once. */
    private Optional<ScalingDecision> step(List<Flow> flows) {
        List<GroupLoad> loads = new ArrayList<>();
        groups.forEach(g -> loads.add(measure(g, flows)));
        Optional<ScalingDecision> d = policy.evaluate(new ChainLoad(C, "srv", true, 1, CORES, loads), now);
        d.ifPresent(this::apply);
        now += STEP_MS;
        return d;
    }

    private void apply(ScalingDecision d) {
        decisions.add(d);
        Set<Integer> touched = new HashSet<>();
        if (d.kind() == ScalingDecision.Kind.SPLIT) {
            assertTrue("one class: only a class split can help, got " + d, d.dividesClass());
            Group g = group(d.groups().get(0));
            Set<Integer> used = new HashSet<>();
            groups.forEach(x -> used.add(x.core));
            int core = 0;
            while (used.contains(core)) {
                core++;
            }
            assertTrue("never beyond the server's cores: " + d, core < CORES);
            Group added = new Group("g0." + ++children, core, g.slice.half(d.bit(), true));
            g.slice = g.slice.half(d.bit(), false);
            groups.add(added);
            touched.add(g.core);
            touched.add(core);
        } else {
            Group keep = group(d.groups().get(0));
            Group retire = group(d.groups().get(1));
            Optional<ClassSlice> joined = keep.slice.union(retire.slice);
            assertTrue("the policy merges two halves of one slice only: " + d, joined.isPresent());
            keep.slice = joined.get();
            groups.remove(retire);
            touched.add(keep.core);
            touched.add(retire.core);
        }
        policy.applied(C, "srv", touched, now);
    }

    private Group group(String id) {
        return groups.stream().filter(g -> g.id.equals(id)).findFirst().orElseThrow();
    }

    /** Every source port belongs to exactly one group's slice. */
    private void assertPartition() {
        for (int port = 0; port < 65536; port += 7) {
            int p = port;
            assertEquals("port " + port, 1, groups.stream().filter(g -> g.slice.contains(p)).count());
        }
        for (int i = 0; i < groups.size(); i++) {
            for (int j = i + 1; j < groups.size(); j++) {
                assertTrue(groups.get(i).slice + " / " + groups.get(j).slice,
                        groups.get(i).slice.disjoint(groups.get(j).slice));
            }
        }
    }

    @Test
    public void theDemoClassSpreadsOverSixteenCoresBalancedAndComesBackWhole() {
        // 12 cores' worth of load in 4096 flows of one class: 16 slices of ~0.75 each, none overloaded
        List<Flow> heavy = flows(4096, 12 * CORE_PPS, 7);
        for (int i = 0; i < 2000 && groups.size() < CORES; i++) {
            step(heavy);
        }
        assertEquals(CORES, groups.size());
        assertEquals(CORES, groups.stream().map(g -> g.core).distinct().count());
        assertPartition();
        double min = Double.MAX_VALUE;
        double max = 0;
        for (Group g : groups) {
            double load = rate(g, heavy) / CORE_PPS;
            min = Math.min(min, load);
            max = Math.max(max, load);
            assertEquals("four bits divide each slice", 4, Integer.bitCount(g.slice.mask()));
        }
        assertTrue("balanced: " + min + " .. " + max, max < 0.8 && min > 0.65 && max / min < 1.15);
        assertEquals(CORES - 1, decisions.size());
        decisions.forEach(d -> assertTrue(d.reason(), d.dividesClass()
                && d.reason().contains("class 0 divided by source-port bit " + d.bit())));
        // steady at that load: no further decision (all below 0.8, none idle)
        for (int i = 0; i < 100; i++) {
            assertFalse(step(heavy).isPresent());
        }

        // the load falls to a quarter core: the halves join pairwise, back to the whole class on one core
        List<Flow> light = flows(4096, 0.25 * CORE_PPS, 7);
        for (int i = 0; i < 4000 && groups.size() > 1; i++) {
            step(light);
        }
        assertEquals(1, groups.size());
        assertEquals("g0", groups.get(0).id);
        assertEquals(ClassSlice.WHOLE, groups.get(0).slice);
        assertEquals(2 * (CORES - 1), decisions.size());
        assertPartition();
    }

    @Test
    public void aClassOfOneFlowIsNeverDivided() {
        // one elephant flow: every bit puts all of it on one side, so a split would move nothing
        List<Flow> one = List.of(new Flow(40001, 0.95 * CORE_PPS));
        for (int i = 0; i < 100; i++) {
            assertFalse(step(one).isPresent());
        }
        // two flows differing in bit 3 only: divided by bit 3, one flow per core
        List<Flow> two = List.of(new Flow(40000, 0.45 * CORE_PPS), new Flow(40008, 0.45 * CORE_PPS));
        Optional<ScalingDecision> d = Optional.empty();
        for (int i = 0; i < 10 && d.isEmpty(); i++) {
            d = step(two);
        }
        assertTrue(d.isPresent());
        assertEquals(3, d.get().bit());
        assertEquals(new TreeSet<>(List.of(0, 1)), new TreeSet<>(List.of(groups.get(0).core, groups.get(1).core)));
    }

    @Test
    public void wholeClassesStillSplitWhenThatBalancesBetter() {
        // two classes of equal rate: the whole-class halves are even, better than any bit of one class
        long[] half = new long[ClassSlice.BITS];
        java.util.Arrays.fill(half, 50);
        GroupLoad g = new GroupLoad("g0", 0, 0.9, Map.of(0, 500.0, 1, 500.0), "napt", true, Map.of(),
                Map.of(0, new ClassBits(ClassSlice.WHOLE, 100, half), 1, new ClassBits(ClassSlice.WHOLE, 100, half)));
        ScalingDecision d = policy.evaluate(new ChainLoad(C, "srv", true, 1, CORES, List.of(g)), 0).orElseThrow();
        assertFalse(d.toString(), d.dividesClass());
        // one class carrying 95%: its bit halves beat whole classes (95/5)
        GroupLoad skewed = new GroupLoad("g0", 0, 0.9, Map.of(0, 950.0, 1, 50.0), "napt", true, Map.of(),
                Map.of(0, new ClassBits(ClassSlice.WHOLE, 100, half)));
        d = new ScalingPolicy(ScalingPolicy.Params.DEFAULT)
                .evaluate(new ChainLoad(C, "srv", true, 1, CORES, List.of(skewed)), 0).orElseThrow();
        assertTrue(d.toString(), d.dividesClass());
        assertEquals(0, d.classId());
    }
}
