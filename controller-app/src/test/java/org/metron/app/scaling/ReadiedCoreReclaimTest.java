package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * A core held by a failover move readied for ANOTHER chain (its server's agent answered a Health poll late and was
 * suspected, {@code impl.FailoverPreparation}) is reclaimable by an owner operation that needs it
 * ({@code impl.ReadiedCores}): a scale-out of one chain and the deployment of a new one each take the move back
 * through the chain manager's take-back and use its core; the scaling policy counts that core free. Three servers of
 * one worker core each (real agents): chain X on one, chain Y on another, and Y's move readied on the third, whose
 * only core is then the one X's scale-out (or a new chain) can take. Before, both were refused "no free core" / "no
 * server fits" while the move held it.
 */
public class ReadiedCoreReclaimTest extends ScaleOutFixture {
    private static final Map<Integer, Double> RATES = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0);
    private static final ChainId Y = ChainId.of("other");

    /** A rig of X over agents a and c, Y placed on X's other server, the third agent b added as server metron:c. */
    private interface ThreeServerTest {
        void run(Rig rig, MetronServer spare) throws Exception;
    }

    private void onThreeOneCoreServers(String name, ThreeServerTest test) throws Exception {
        RealAgent a = RealAgent.startWorkers(name + "-a", 1);
        RealAgent b = RealAgent.startWorkers(name + "-b", 1);
        RealAgent c = RealAgent.startWorkers(name + "-c", 1);
        Rig rig = null;
        try {
            rig = new Rig(name, a.client(), c.client());
            rigs.remove(rig); // removed here, with the other chains
            // the only free core is the rig's other server's: Y goes there
            assertEquals(ChainState.ACTIVE, rig.manager.submit(Fixtures.chainJsonAt(Y.name(), 4)).state());
            assertEquals(rig.away.id(), rig.manager.placement(Y).get().server().get());
            String nic = b.client().getResources().get(10, TimeUnit.SECONDS).getNics(0).getName();
            MetronServer spare = new MetronServer(DeviceId.deviceId("metron:spare"), b.client(),
                    Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/12")));
            rig.servers.add(spare);
            // Y's server answered late: Y readied on the spare, the one core left
            rig.manager.serverSuspected(rig.away.id());
            long end = System.currentTimeMillis() + 10_000;
            while (pipelines(spare).isEmpty() && System.currentTimeMillis() < end) {
                Thread.sleep(20);
            }
            assertTrue("Y readied on the spare", rig.store.prepared().get(Y).isPresent());
            assertEquals(List.of(Y.name()), pipelines(spare));
            test.run(rig, spare);
        } finally {
            if (rig != null) {
                for (ChainId id : List.copyOf(rig.manager.chains().stream().map(x -> x.id())
                        .collect(Collectors.toList()))) {
                    rig.manager.remove(id);
                }
                assertEquals("every rule any chain installed is gone", 0, rig.switches.total());
                rig.manager.close();
            }
            a.close();
            b.close();
            c.close();
        }
    }

    private static List<String> pipelines(MetronServer s) throws Exception {
        return s.agent().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().stream()
                .map(p -> p.getPipelineId()).collect(Collectors.toList());
    }

    private static List<String> groups(MetronServer s) throws Exception {
        return s.agent().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().stream()
                .flatMap(p -> p.getGroupsList().stream()).map(GroupStatus::getGroupId).collect(Collectors.toList());
    }

    @Test
    public void aScaleOutTakesTheCoreOfAnotherChainsReadiedMoveAndThePolicyCountsItFree() throws Exception {
        onThreeOneCoreServers("reclaim-out", (rig, spare) -> {
            ScalingExecutor executor = rig.executor();
            for (MetronServer s : rig.servers.servers()) {
                executor.resources().refresh(s);
            }
            // the refresh asks the agents and returns: their answers arrive on gRPC threads (in the whole suite at
            // load, after the count below had read an empty cache: 0 free, twice in a row)
            long end = System.currentTimeMillis() + 10_000;
            while (rig.servers.servers().stream().anyMatch(s -> executor.resources().fresh(s.id()).isEmpty())
                    && System.currentTimeMillis() < end) {
                Thread.sleep(20);
            }
            // the policy's view: no core on X's server (one at most), the spare's only core counted free
            int[] free = executor.freeCores(rig.placement(), rig.store.placements().snapshot().values(),
                    rig.scaling.inProgress());

            ScalingEvent e = executor.split(rig.chain, "g0", RATES, "test", System.currentTimeMillis());

            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            assertEquals("free elsewhere for the policy: the core Y's readied move held", 1, free[1]);
            assertEquals(spare.id(), rig.group("g0.1").server().orElseThrow());
            assertFalse("Y's readied move was taken back", rig.store.prepared().get(Y).isPresent());
            assertEquals("the spare runs X's new half only", List.of("g0.1"), groups(spare));
            assertEquals("Y runs on as it did", ChainState.ACTIVE, rig.manager.chain(Y).get().state());
            assertEquals(rig.away.id(), rig.manager.placement(Y).get().server().get());
        });
    }

    @Test
    public void aNewChainIsDeployedOnTheCoreOfAnotherChainsReadiedMove() throws Exception {
        onThreeOneCoreServers("reclaim-new", (rig, spare) -> {
            ChainId z = ChainId.of("third");

            assertEquals(ChainState.ACTIVE, rig.manager.submit(Fixtures.chainJsonAt(z.name(), 5)).state());

            assertEquals(spare.id(), rig.manager.placement(z).get().server().get());
            assertFalse("Y's readied move was taken back", rig.store.prepared().get(Y).isPresent());
            assertEquals(List.of(z.name()), pipelines(spare));
            assertEquals(ChainState.ACTIVE, rig.manager.chain(Y).get().state());
        });
    }
}
