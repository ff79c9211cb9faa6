package org.metron.app.impl;

import org.junit.After;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * When a lost server's chain moves: as soon as both its failover deadline has passed and its move is readied on
 * another server, whichever is later, never later because of another server's failover. Real agents over gRPC, the
 * real chain manager and store, the agent watch wired as the embedded host wires it (switches stood in). Two servers'
 * agents are killed together; one chain's readying is held up for {@link #HELD_MS} by its lock, held the way a
 * restore or reroute of that chain holds it while it waits on a dead agent (measured in the 3-node Karaf test: a
 * restore held the chain for 4 s). The other chain must move when its own deadline passes; the held one as soon as it
 * is readied.
 */
public class FailoverDeadlineTest {
    /** How long the slow chain's lock is held from the kill: past both deadlines (at most interval + 1500 ms). */
    private static final long HELD_MS = 3500;
    /** After the later of the deadline and the readying, the move itself (a switch rule batch, store writes). */
    private static final long MOVE_BOUND_MS = 1000;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final Map<String, Long> seen = new ConcurrentHashMap<>();

    @After
    public void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private static MetronServer server(int i, GrpcAgentClient c) throws Exception {
        String nic = c.getResources().get(10, TimeUnit.SECONDS).getNicsList().get(0).getName();
        return new MetronServer(DeviceId.deviceId(Fixtures.serverId(i)), c,
                Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/" + (10 + i))));
    }

    private RealAgent agent(String name, int workers) throws Exception {
        RealAgent a = RealAgent.startWorkers(name, workers);
        open.add(a);
        return a;
    }

    @Test
    public void aLostServersChainMovesAtTheLaterOfItsDeadlineAndItsReadyingNotAfterAnotherServersFailover()
            throws Exception {
        // one core each on the two servers that die (a chain apiece), two on the spare (room for both)
        RealAgent slowAgent = agent("deadlineSlow", 1);
        RealAgent fastAgent = agent("deadlineFast", 1);
        RealAgent spareAgent = agent("deadlineSpare", 2);
        TestSwitches switches = new TestSwitches();
        TestServers servers = new TestServers().add(server(0, slowAgent.client()));
        Duration t = Duration.ofSeconds(5);
        ChainStore store = new ChainStore(new LocalStoreFactory(), switches);
        ChainManager manager = new ChainManager(store, servers, switches, new SingleInstanceLeadership(),
                new PlacementEngine(servers, Fixtures.network(3), switches, new Random(1), t),
                new RulePlanner(Fixtures.APP, Fixtures.network(3)), new Deployer(switches, t), t,
                (spec, profile) -> RealAgentRestartTest.compiled(spec.name()));
        open.add(manager::close);
        ChainId slow = ChainId.of("slow");
        ChainId fast = ChainId.of("fast");
        assertEquals(ChainState.ACTIVE, manager.submit(Fixtures.chainJsonAt("slow", 1)).state());
        servers.add(server(1, fastAgent.client()));
        assertEquals(ChainState.ACTIVE, manager.submit(Fixtures.chainJsonAt("fast", 2)).state());
        servers.add(server(2, spareAgent.client()));
        DeviceId slowServer = DeviceId.deviceId(Fixtures.serverId(0));
        DeviceId fastServer = DeviceId.deviceId(Fixtures.serverId(1));
        assertEquals(slowServer, manager.placement(slow).get().server().get());
        assertEquals(fastServer, manager.placement(fast).get().server().get());

        // the embedded host's wiring, the outages' starts noted (each deadline passes 1500 ms after its outage began:
        // the first unanswered Health, a round or two before the suspicion)
        ServerFailover failover = new ServerFailover(manager, AgentWatch.configuredFailover(), id -> true) {
            @Override
            public void suspected(DeviceId server, long since) {
                seen.putIfAbsent("suspected " + server, since);
                super.suspected(server, since);
            }
        };
        open.add(failover);
        AgentWatch watch = new AgentWatch(servers, new ServerRecovery(store, manager, t), t).failover(failover);
        open.add(watch);
        watch.start(AgentWatch.configuredInterval());
        Thread.sleep(2 * AgentWatch.INTERVAL_MS); // its first rounds: every agent seen answering

        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (store.lockFor(slow)) {
                held.countDown();
                sleep(HELD_MS);
            }
        }, "holds-chain-slow");
        holder.start();
        assertTrue(held.await(5, TimeUnit.SECONDS));
        long t0 = System.nanoTime();
        slowAgent.kill();
        fastAgent.kill();
        long end = System.currentTimeMillis() + 20_000;
        while (!(seen.containsKey("moved " + slow) && seen.containsKey("moved " + fast))
                && System.currentTimeMillis() < end) {
            List<String> running = pipelines(spareAgent.client());
            for (ChainId id : List.of(slow, fast)) {
                if (running.contains(id.name())) {
                    seen.putIfAbsent("readied " + id, System.nanoTime());
                }
                if (movedOff(manager, id, id.equals(slow) ? slowServer : fastServer)) {
                    seen.putIfAbsent("moved " + id, System.nanoTime());
                }
            }
            Thread.sleep(5);
        }
        holder.join();
        long deadline = AgentWatch.configuredFailover().toMillis();
        long fastDeadline = ms(t0, seen.get("suspected " + fastServer)) + deadline;
        long slowDeadline = ms(t0, seen.get("suspected " + slowServer)) + deadline;
        long fastReadied = ms(t0, seen.get("readied " + fast));
        long slowReadied = ms(t0, seen.get("readied " + slow));
        long fastMoved = ms(t0, seen.get("moved " + fast));
        long slowMoved = ms(t0, seen.get("moved " + slow));
        System.out.printf("failover deadline breakdown (ms after the kill; suspected: the outage's start, deadline %d "
                        + "ms after it):%n"
                        + "  fast: suspected %d, readied %d, deadline %d, moved %d%n"
                        + "  slow (lock held %d ms): suspected %d, readied %d, deadline %d, moved %d%n", deadline,
                fastDeadline - deadline, fastReadied, fastDeadline, fastMoved, HELD_MS, slowDeadline - deadline,
                slowReadied, slowDeadline, slowMoved);
        assertTrue("both moved off their dead servers", fastMoved >= 0 && slowMoved >= 0);
        assertTrue("the slow chain readied only once its lock was free", slowReadied >= HELD_MS);
        // before: one worker readied every server's chains in turn, so the fast chain's readying waited for the slow
        // one's (readied 10416 ms after the kill, 3401 ms after the slow chain; its deadline 2781)
        assertTrue("the fast chain readied (" + fastReadied + " ms) before the held one (" + slowReadied + " ms)",
                fastReadied < slowReadied);
        assertTrue("the fast chain moved at its deadline (" + fastDeadline + " ms) or readying (" + fastReadied
                        + " ms), not after the other server's failover: " + fastMoved + " ms",
                fastMoved <= Math.max(fastDeadline, fastReadied) + MOVE_BOUND_MS);
        assertTrue("the slow chain moved as soon as it was readied (" + slowReadied + " ms): " + slowMoved + " ms",
                slowMoved <= Math.max(slowDeadline, slowReadied) + MOVE_BOUND_MS);
    }

    private static boolean movedOff(ChainManager manager, ChainId id, DeviceId lost) {
        return manager.placement(id).flatMap(p -> p.server()).map(s -> !s.equals(lost)).orElse(false)
                && manager.chain(id).get().state() == ChainState.ACTIVE;
    }

    private static List<String> pipelines(GrpcAgentClient c) {
        try {
            List<String> out = new ArrayList<>();
            c.listPipelines().get(5, TimeUnit.SECONDS).getPipelinesList().forEach(p -> out.add(p.getPipelineId()));
            return out;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static long ms(long t0, Long at) {
        return at == null ? -1 : (at - t0) / 1_000_000;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
