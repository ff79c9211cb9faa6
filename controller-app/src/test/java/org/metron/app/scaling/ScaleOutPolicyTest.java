package org.metron.app.scaling;

import org.junit.Test;
import org.metron.app.api.ChainId;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * The policy's choice of server (docs/scaling.md#scale-out), pure: a core on the chain's server when one is free
 * there, another server's when none is (all taken, or maxCpuCores reached there), none at all when neither has
 * one; a group on another server comes back when idle, and cools down on its own server.
 */
public class ScaleOutPolicyTest {
    private static final ChainId C = ChainId.of("c");
    private static final Map<Integer, Double> TWO = Map.of(0, 10.0, 1, 10.0);

    private final ScalingPolicy policy = new ScalingPolicy(ScalingPolicy.Params.DEFAULT);

    private static GroupLoad g(String id, int core, double load) {
        return new GroupLoad(id, core, load, TWO, "napt", true);
    }

    private static ChainLoad chain(int maxCores, int freeHere, int freeElsewhere, GroupLoad... groups) {
        return new ChainLoad(C, "srv", true, 1, maxCores, List.of(groups)).withFreeCores(freeHere, freeElsewhere);
    }

    @Test
    public void aFreeCoreOnTheChainsServerIsPreferred() {
        Optional<ScalingDecision> d = policy.evaluate(chain(4, 1, 8, g("g0", 1, 0.95)), 0);
        assertTrue(d.isPresent());
        assertFalse(d.get().toString(), d.get().scaleOut());
    }

    @Test
    public void noCoreFreeOnTheServerScalesOut() {
        Optional<ScalingDecision> d = policy.evaluate(chain(4, 0, 3, g("g0", 1, 0.95)), 0);
        assertTrue(d.isPresent());
        assertTrue(d.get().scaleOut());
        assertEquals(List.of("g0"), d.get().groups());
        assertTrue(d.get().reason(), d.get().reason().contains("no core free on srv (1 of at most 4 cores used, 0 "
                + "free): new half on another server (3 cores free there)"));
    }

    @Test
    public void maxCpuCoresReachedOnTheServerScalesOutEvenWithCoresFreeThere() {
        Optional<ScalingDecision> d = policy.evaluate(chain(2, 5, 3, g("g0", 1, 0.95), g("g0.1", 2, 0.9)), 0);
        assertTrue(d.isPresent());
        assertTrue(d.get().scaleOut());
    }

    @Test
    public void noCoreAnywhereMeansNoSplit() {
        assertFalse(policy.evaluate(chain(4, 0, 0, g("g0", 1, 0.95)), 0).isPresent());
        assertFalse(policy.evaluate(chain(1, 3, 0, g("g0", 1, 0.95)), 50).isPresent());
    }

    @Test
    public void aScaledOutGroupComesBackWhenBothAreIdle() {
        GroupLoad away = g("g0.1", 1, 0.1).onServer("srv2");
        // the same core number on two servers is two cores; maxCores counts the chain's server only
        ChainLoad idle = chain(1, 0, 3, g("g0", 1, 0.1), away);
        assertEquals(1, idle.cores());
        assertFalse(policy.evaluate(idle, 0).isPresent());
        Optional<ScalingDecision> d = policy.evaluate(idle, 2100);
        assertTrue(d.isPresent());
        assertEquals(ScalingDecision.Kind.MERGE, d.get().kind());
        assertEquals("the group on the chain's server is kept", List.of("g0", "g0.1"), d.get().groups());
        assertTrue(d.get().reason(), d.get().reason().contains("of srv2, back to srv"));
    }

    @Test
    public void aScaledOutGroupCoolsDownOnItsOwnServer() {
        policy.applied(C, "srv2", Set.of(1), 0);
        GroupLoad away = g("g0.1", 1, 0.95).onServer("srv2");
        assertFalse("srv2/1 cools", policy.evaluate(chain(4, 0, 3, g("g0", 2, 0.1), away), 500).isPresent());
        assertTrue(policy.coolingCores(500).contains("srv2/1"));
        assertFalse(policy.coolingCores(500).contains("srv/1"));
        // the chain's own core 1 is another core: it splits
        assertTrue(policy.evaluate(chain(4, 0, 3, g("g0", 1, 0.95), g("g0.1", 1, 0.1).onServer("srv2")), 600)
                .isPresent());
    }
}
