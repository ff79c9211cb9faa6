package org.metron.app.scaling;

import org.junit.Test;
import org.metron.app.api.ChainId;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class ScalingPolicyTest {
    private static final ChainId C = ChainId.of("c");
    private static final Map<Integer, Double> TWO = Map.of(0, 10.0, 1, 10.0);

    private static GroupLoad g(String id, int core, double load) {
        return new GroupLoad(id, core, load, TWO, "napt", true);
    }

    private static ChainLoad chain(boolean auto, int min, int max, GroupLoad... groups) {
        return new ChainLoad(C, "srv", auto, min, max, List.of(groups));
    }

    private static ChainLoad chain(GroupLoad... groups) {
        return chain(true, 1, 4, groups);
    }

    private final ScalingPolicy policy = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);

    @Test
    public void theFirstOverloadedReportSplits() {
        assertFalse(policy.evaluate(chain(g("g0", 1, 0.3)), 0).isPresent());
        Optional<ScalingDecision> d = policy.evaluate(chain(g("g0", 1, 0.9)), 50);
        assertTrue(d.isPresent());
        assertEquals(ScalingDecision.Kind.SPLIT, d.get().kind());
        assertEquals(List.of("g0"), d.get().groups());
        assertTrue(d.get().reason(), d.get().reason().contains("load 0.90 (ewma 0.60) >= 0.80 in 1 report(s)"));
        assertEquals("onset is the first overloaded report", 50, d.get().onsetMs());
    }

    @Test
    public void justBelowTheThresholdNeverSplits() {
        ScalingPolicy p = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
        for (int i = 0; i < 100; i++) {
            assertFalse(p.evaluate(chain(g("g0", 1, 0.79)), i * 50L).isPresent());
        }
    }

    @Test
    public void limitsAndOptOutPreventSplits() {
        assertFalse(policy.evaluate(chain(false, 1, 4, g("g0", 1, 1.0)), 0).isPresent());
        assertFalse("at maxCores", policy.evaluate(chain(true, 2, 2, g("g0", 1, 1.0), g("g1", 2, 0.1)), 0)
                .isPresent());
        GroupLoad single = new GroupLoad("g0", 1, 1.0, Map.of(7, 100.0), "napt", true);
        assertFalse("a single class cannot split", policy.evaluate(chain(single), 0).isPresent());
        GroupLoad classifier = new GroupLoad("g0", 1, 1.0, TWO, "", false);
        assertFalse("a classifying group does not split", policy.evaluate(chain(classifier), 0).isPresent());
    }

    @Test
    public void theHeaviestOverloadedGroupSplits() {
        Optional<ScalingDecision> d = policy.evaluate(chain(g("g0", 1, 0.96), g("g1", 2, 0.99)), 0);
        assertEquals(List.of("g1"), d.get().groups());
    }

    @Test
    public void cooldownHoldsTouchedCores() {
        policy.applied(C, "srv", Set.of(1, 2), 1000);
        assertFalse(policy.evaluate(chain(g("g0", 1, 1.0)), 1500).isPresent());
        assertTrue(policy.coolingCores(1500).contains("srv/1"));
        assertTrue(policy.evaluate(chain(g("g0", 1, 1.0)), 2000).isPresent());
        // cooldown is per core of a server, not per chain
        ScalingPolicy p = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
        p.applied(ChainId.of("other"), "srv", Set.of(3), 0);
        assertTrue(p.evaluate(chain(g("g0", 1, 1.0)), 10).isPresent());
        assertFalse(p.evaluate(chain(g("g0", 3, 1.0)), 20).isPresent());
    }

    private Optional<ScalingDecision> feed(ScalingPolicy p, int samples, GroupLoad... groups) {
        Optional<ScalingDecision> d = Optional.empty();
        for (int i = 0; i < samples; i++) {
            d = p.evaluate(chain(groups), 10_000 + i * 100L);
            if (d.isPresent()) {
                return d;
            }
        }
        return d;
    }

    @Test
    public void twoIdleGroupsWithTheSameStatefulKeyMergeAfterTwoSeconds() {
        ScalingPolicy p = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
        for (int i = 0; i < 40; i++) {
            assertFalse(p.evaluate(chain(g("g0.1", 2, 0.1), g("g0", 1, 0.1)), i * 50L).isPresent());
        }
        // one busier report restarts the wait: scale-in is lazy
        assertFalse(p.evaluate(chain(g("g0.1", 2, 0.5), g("g0", 1, 0.1)), 2000).isPresent());
        for (int i = 1; i < 40; i++) {
            assertFalse(p.evaluate(chain(g("g0.1", 2, 0.1), g("g0", 1, 0.1)), 2000 + i * 50L).isPresent());
        }
        Optional<ScalingDecision> d = p.evaluate(chain(g("g0.1", 2, 0.1), g("g0", 1, 0.1)), 4050);
        assertTrue(d.isPresent());
        assertEquals(ScalingDecision.Kind.MERGE, d.get().kind());
        assertEquals("the original absorbs its split-off half", List.of("g0", "g0.1"), d.get().groups());
    }

    @Test
    public void mergesNeedTheSameKeyRoomAndMoreThanMinCores() {
        GroupLoad other = new GroupLoad("g1", 2, 0.1, TWO, "lb", true);
        assertFalse(feed(new ScalingPolicy(ScalingPolicy.Params.DEFAULT), 40, g("g0", 1, 0.1), other).isPresent());
        ScalingPolicy p = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
        for (int i = 0; i < 40; i++) {
            assertFalse("minCores 2", p.evaluate(chain(true, 2, 4, g("g0", 1, 0.1), g("g1", 2, 0.1)), i * 100L)
                    .isPresent());
        }
        // groups sharing a core: merging frees nothing
        assertFalse(feed(new ScalingPolicy(ScalingPolicy.Params.DEFAULT), 40, g("g0", 1, 0.1), g("g1", 1, 0.1))
                .isPresent());
    }

    @Test
    public void theCheapestPairMergesAndTheMergedLoadStaysBelowTheCeiling() {
        Optional<ScalingDecision> d = feed(new ScalingPolicy(ScalingPolicy.Params.DEFAULT), 40, g("g0", 1, 0.28),
                g("g1", 2, 0.05), g("g2", 3, 0.04));
        assertEquals(List.of("g1", "g2"), d.get().groups());
        // 0.29 + 0.29 = 0.58 <= 0.60 merges
        assertTrue(feed(new ScalingPolicy(ScalingPolicy.Params.DEFAULT), 40, g("g0", 1, 0.29), g("g1", 2, 0.29))
                .isPresent());
    }

    @Test
    public void aFreshSplitDoesNotMergeBack() {
        // an overloaded group (0.9) splits into halves of ~0.45: above underload, so they never merge back
        ScalingPolicy p = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);
        List<Optional<ScalingDecision>> seen = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            seen.add(p.evaluate(chain(g("g0", 1, 0.45), g("g0.1", 2, 0.45)), i * 100L));
        }
        assertTrue(seen.stream().noneMatch(Optional::isPresent));
    }

    @Test
    public void theOriginalPolicyWaitsForItsEwma() {
        ScalingPolicy p = new ScalingPolicy(ScalingPolicy.Params.named("original"));
        assertFalse(p.evaluate(chain(g("g0", 1, 0.2)), 0).isPresent());
        // a full core waits for the EWMA to reach 0.75: 0.5 * 1.0 + 0.5 * 0.2 = 0.6, then 0.8
        assertFalse(p.evaluate(chain(g("g0", 1, 1.0)), 500).isPresent());
        assertTrue(p.evaluate(chain(g("g0", 1, 1.0)), 1000).isPresent());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScalingPolicy.Params.named("fast"));
        assertTrue(e.getMessage(), e.getMessage().contains("unknown scaling policy 'fast' (known: metron, original)"));
    }

    @Test
    public void badParamsAreRejectedNamingTheRule() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ScalingPolicy.Params(0.5, 0.6, 0.7, 0.5, 1, false, 2000, 1000));
        assertTrue(e.getMessage(), e.getMessage().contains("underload (0.6) < overload (0.5)"));
        e = assertThrows(IllegalArgumentException.class,
                () -> new ScalingPolicy.Params(0.8, 0.3, 0.85, 0.5, 1, false, 2000, 1000));
        assertTrue(e.getMessage(), e.getMessage().contains("a merged group must not overload"));
        e = assertThrows(IllegalArgumentException.class,
                () -> new ChainLoad(C, "s", true, 3, 2, List.of()));
        assertTrue(e.getMessage(), e.getMessage().contains("minCores (3) <= maxCores (2)"));
    }

    @Test
    public void aPolicyDecidingOnOneRawReportAsksForOverloadAlertsAndASmoothingOneDoesNot() {
        assertEquals(0.8, ScalingPolicy.Params.DEFAULT.alertLoad(), 1e-9);
        assertEquals(0.0, ScalingPolicy.Params.ORIGINAL.alertLoad(), 1e-9);
        assertEquals(0.0, new ScalingPolicy.Params(0.8, 0.3, 0.6, 0.5, 3, false, 2000, 1000).alertLoad(), 1e-9);
    }
}
