package org.metron.drivers.provider;

import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.server.DefaultAgentClientService;
import org.metron.drivers.server.MetronDeviceIds;
import org.metron.drivers.server.MetronServerHandler;
import org.metron.drivers.testing.AgentProcess;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * Liveness against a real agent, as the provider runs it (probes every 500 ms and on every change of the agent's
 * channel): a SIGKILLed agent's device is unavailable within 1 s, a restarted one's available again within 1 s,
 * five times over; and every time the device is announced it is already reachable (ONOS's DeviceManager asks
 * isReachable right after granting mastership and relinquishes the role on a no).
 */
public class ServerLivenessAgentTest {

    private static final long GOAL_MS = 1000;
    /** Any single cycle: the agent call deadline (5 s) would be the detection time without the channel watch. */
    private static final long BOUND_MS = 2500;

    @Test
    public void aKilledAgentIsNoticedAndARestartedOneFoundWithinASecond() throws Exception {
        DefaultAgentClientService agents = new DefaultAgentClientService();
        RecordingProviderServices onos = new RecordingProviderServices();
        ServerDevices servers = new ServerDevices(onos.devices, onos.linkService, agents,
                                                  id -> new MetronServerHandler(id, agents), "metron-server");
        onos.isReachable = servers::isConnected;
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
        AgentProcess agent = AgentProcess.start(new AgentProcess.Options());
        int port = agent.port();
        AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(port).deadline(Duration.ofSeconds(5))
                .build();
        DeviceId id = MetronDeviceIds.deviceId(ep);
        try {
            executor.submit(() -> servers.declare(id, ep, Map.of())).get();
            servers.startProbing(executor, MetronServerProvider.DEFAULT_PROBE_MS);
            assertTrue(onos.available.containsKey(id));
            List<Long> downs = new java.util.ArrayList<>();
            List<Long> ups = new java.util.ArrayList<>();
            for (int cycle = 1; cycle <= 5; cycle++) {
                long killed = System.nanoTime();
                agent.kill();
                long down = waitMs(() -> !onos.available.containsKey(id) && !servers.isConnected(id))
                        + (System.nanoTime() - killed) / 1_000_000; // from the SIGKILL, not from its reaping
                agent = AgentProcess.start(new AgentProcess.Options().listenPort(port));
                long up = waitMs(() -> onos.available.containsKey(id) && servers.isConnected(id));
                System.out.printf("cycle %d: unavailable %d ms after SIGKILL, available %d ms after the agent "
                                  + "served again%n", cycle, down, up);
                downs.add(down);
                ups.add(up);
                // one slow cycle on a loaded machine is tolerated; one past the old probe's deadline is a regression
                assertTrue("unavailable after " + down + " ms (bound " + BOUND_MS + ")", down <= BOUND_MS);
                assertTrue("available again after " + up + " ms (bound " + BOUND_MS + ")", up <= BOUND_MS);
            }
            assertTrue("median unavailable after " + median(downs) + " ms " + downs + " (goal " + GOAL_MS + ")",
                       median(downs) <= GOAL_MS);
            assertTrue("median available after " + median(ups) + " ms " + ups + " (goal " + GOAL_MS + ")",
                       median(ups) <= GOAL_MS);
            System.out.println("ONOS was told: " + onos.calls);
            assertEquals("reachable every time it was announced", List.of(true, true, true, true, true, true),
                         onos.reachableWhenConnected);
        } finally {
            executor.shutdownNow();
            agent.close();
            agents.remove(id);
        }
    }

    private static long median(List<Long> xs) {
        List<Long> sorted = new java.util.ArrayList<>(xs);
        java.util.Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    /** Milliseconds until the condition holds (fails after 20 s). */
    private static long waitMs(BooleanSupplier condition) throws InterruptedException {
        long t0 = System.nanoTime();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - t0 > 20_000_000_000L) {
                throw new AssertionError("not within 20 s");
            }
            Thread.sleep(5);
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }
}
