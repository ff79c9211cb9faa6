package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.MetronException;
import org.metron.app.spi.MetronServer;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * A split of a chain for which a failover move is readied (its server's agent answered a Health poll late, as a
 * loaded agent forwarding at rate on two shared CPUs does, and the agent watch suspected it:
 * {@code impl.FailoverPreparation}). The readied move runs the chain's pipeline on the other server's core until
 * the agent answers again or the deadline passes; on the fast network's two-servers topology (one worker core per
 * server) that was the only core the scale-out could take, and the first scale-out of TestTwoServers was refused:
 * "no free core on metron:srv2 ..., and none on servers [metron:srv1] (metron:srv1: cores [0=demo], 0 free ...)".
 * Each server here has one worker core too ({@link #onOneCoreServers}).
 */
public class ScaleOutReadiedFailoverTest extends ScaleOutFixture {
    private static final Map<Integer, Double> RATES = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0);

    /** Suspects the chain's server and waits until its move is readied on the other server's only core. */
    private static void readyFailover(Rig rig) throws Exception {
        rig.manager.serverSuspected(rig.home.id());
        long end = System.currentTimeMillis() + 10_000;
        // recorded when the spare is chosen, before its agent is asked: readied once the pipeline runs there
        while ((rig.store.prepared().get(rig.chain).isEmpty() || groupIds(rig, rig.away).isEmpty())
                && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        assertTrue("readied on the other server", rig.store.prepared().get(rig.chain).isPresent());
        assertEquals("the readied pipeline runs on the other server's only core", List.of("g0"),
                groupIds(rig, rig.away));
    }

    private static List<String> groupIds(Rig rig, MetronServer s) throws Exception {
        return rig.groups(s).stream().map(GroupStatus::getGroupId).collect(Collectors.toList());
    }

    @Test
    public void aScaleOutTakesTheCoreOfAFailoverMoveReadiedForItsChainWhoseServerAnswers() throws Exception {
        onOneCoreServers("readied-out", (rig, a, b) -> {
            rig.importFlow(rig.home, "g0", 5000, 2000);
            readyFailover(rig);

            // the chain's agent answers (it was only late): the scale-out supersedes the readied move
            ScalingEvent e = rig.executor().split(rig.chain, "g0", RATES, "test", System.currentTimeMillis());

            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            assertEquals(rig.away.id(), rig.group("g0.1").server().orElseThrow());
            assertFalse("the readied move was taken back", rig.store.prepared().get(rig.chain).isPresent());
            assertEquals("the other server runs the new half only", List.of("g0.1"), groupIds(rig, rig.away));
            assertEquals(List.of("g0"), groupIds(rig, rig.home));
            assertEquals(Map.of(5000, 2000), rig.flows(rig.home, "g0"));
            rig.assertStoreTruthful();
        });
    }

    @Test
    public void aSplitOfAChainWhoseServerDoesNotAnswerLeavesItsReadiedFailoverMove() throws Exception {
        onOneCoreServers("readied-dead", (rig, a, b) -> {
            readyFailover(rig);
            (rig.home.agent() == a.client() ? a : b).kill();

            // the server may really be lost: what was readied stays for the failover after the deadline
            try {
                rig.executor().split(rig.chain, "g0", RATES, "test", System.currentTimeMillis());
                fail("split with its server's agent dead");
            } catch (MetronException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("a failover move of chain " + rig.chain
                        + " is readied on " + rig.away.id()));
            }
            assertTrue(rig.store.prepared().get(rig.chain).isPresent());
            assertEquals(List.of("g0"), groupIds(rig, rig.away));
            assertTrue(rig.scaling.inProgress().isEmpty());
        });
    }
}
