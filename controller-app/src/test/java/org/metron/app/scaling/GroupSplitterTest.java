package org.metron.app.scaling;

import org.junit.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class GroupSplitterTest {

    @Test
    public void halvesAreBalancedByMeasuredRate() {
        GroupSplitter.Halves h = GroupSplitter.split(List.of(0, 1, 2, 3, 4),
                Map.of(0, 100.0, 1, 60.0, 2, 50.0, 3, 40.0, 4, 10.0));
        // 100 | 60 | 60+50 | 100+40 | 110+10: 140 vs 120, the best any partition of these rates achieves
        assertEquals(List.of(0, 3), h.keep());
        assertEquals(List.of(1, 2, 4), h.move());
        assertEquals(140, h.keepRate(), 1e-9);
        assertEquals(120, h.moveRate(), 1e-9);
    }

    @Test
    public void idleClassesSpreadByCount() {
        GroupSplitter.Halves h = GroupSplitter.split(List.of(5, 6, 7, 8), Map.of());
        assertEquals(2, h.keep().size());
        assertEquals(2, h.move().size());
        assertTrue(h.keep().contains(5));
    }

    @Test
    public void everyClassLandsInExactlyOneHalfAndTheImbalanceIsBounded() {
        Random r = new Random(42);
        for (int round = 0; round < 200; round++) {
            int n = 2 + r.nextInt(30);
            List<Integer> classes = new ArrayList<>();
            Map<Integer, Double> rates = new HashMap<>();
            double max = 0;
            for (int i = 0; i < n; i++) {
                classes.add(i * 3);
                double v = r.nextDouble() < 0.2 ? 0 : r.nextDouble() * 1000;
                rates.put(i * 3, v);
                max = Math.max(max, v);
            }
            GroupSplitter.Halves h = GroupSplitter.split(classes, rates);
            TreeSet<Integer> all = new TreeSet<>(h.keep());
            all.addAll(h.move());
            assertEquals(new TreeSet<>(classes), all);
            assertEquals(n, h.keep().size() + h.move().size());
            assertTrue(!h.keep().isEmpty() && !h.move().isEmpty());
            // greedy LPT: the halves differ by at most the largest single class
            assertTrue(Math.abs(h.keepRate() - h.moveRate()) <= max + 1e-9);
        }
    }

    @Test
    public void aSingleClassCannotSplit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GroupSplitter.split(List.of(4), Map.of(4, 1e6)));
        assertTrue(e.getMessage(), e.getMessage().contains("[4] cannot split"));
    }

    @Test
    public void unitsStayWholeAndAreBalancedByTheirSummedRate() {
        // forward class 0 with the reply class 5 answering it, 1 with 6, 2 with 7; class 3 alone
        GroupSplitter.Halves h = GroupSplitter.splitUnits(List.of(List.of(0, 5), List.of(1, 6), List.of(2, 7),
                List.of(3)), Map.of(0, 100.0, 5, 90.0, 1, 60.0, 6, 60.0, 2, 50.0, 7, 50.0, 3, 30.0));
        // 190 | 120 | 120+100 | 190+30: 220 vs 220
        assertEquals(List.of(0, 3, 5), h.keep());
        assertEquals(List.of(1, 2, 6, 7), h.move());
        assertEquals(220, h.keepRate(), 1e-9);
        assertEquals(220, h.moveRate(), 1e-9);
    }

    @Test
    public void oneUnitCannotSplit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GroupSplitter.splitUnits(List.of(List.of(0, 1, 5)), Map.of()));
        assertTrue(e.getMessage(), e.getMessage().contains("[[0, 1, 5]]"));
    }
}
