package org.metron.drivers.agent;

import org.junit.Test;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.Stats;
import org.metron.drivers.testing.AgentProcess;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** One client across an agent restart on the same port: calls fail while it is down, then work again. */
public class AgentRestartTest {

    @Test
    public void clientAndLoadStreamReconnectAfterAgentRestart() throws Exception {
        int port = AgentProcess.freePort();
        AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(port).deadline(Duration.ofSeconds(15))
                .build();
        List<Stats> reports = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AgentProcess first = AgentProcess.start(new AgentProcess.Options().listenPort(port));
        try (GrpcAgentClient client = GrpcAgentClient.connect(ep);
             AutoCloseable stream = client.streamLoad(50, reports::add, errors::add)) {
            HealthReply before = client.health().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS);
            waitFor(() -> reports.size() >= 2, "load reports from the first agent");

            first.close();
            CompletionException down = assertThrows(CompletionException.class, () -> client.health().join());
            AgentException e = (AgentException) down.getCause();
            assertEquals(AgentException.Code.UNAVAILABLE, e.code());
            assertEquals("127.0.0.1:" + port, e.target());
            waitFor(() -> !errors.isEmpty(), "the load stream reporting the loss");
            assertTrue(errors.get(0) instanceof AgentException);

            AgentProcess second = AgentProcess.start(new AgentProcess.Options().listenPort(port));
            try {
                HealthReply after = client.health().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS);
                assertTrue(after.getServing());
                assertNotEquals("a restarted agent has a new boot id", before.getBootId(), after.getBootId());
                int seen = reports.size();
                waitFor(() -> reports.size() >= seen + 2, "load reports after the restart");
            } finally {
                second.close();
            }
        } finally {
            first.close();
        }
    }

    @Test
    public void closingTheSubscriptionStopsReports() throws Exception {
        List<Stats> reports = new CopyOnWriteArrayList<>();
        try (AgentProcess agent = AgentProcess.start(new AgentProcess.Options());
             GrpcAgentClient client = GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(agent.port())
                     .deadline(AgentProcess.CALL_DEADLINE).build())) {
            AutoCloseable sub = client.streamLoad(20, reports::add, t -> { });
            waitFor(() -> reports.size() >= 2, "load reports");
            sub.close();
            Thread.sleep(100);
            int after = reports.size();
            Thread.sleep(300);
            assertEquals("no reports after close", after, reports.size());
            assertFalse(client.listPipelines().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS).getPipelinesList().iterator().hasNext());
        }
    }

    /**
     * The registry closes a server's client when its netcfg entry goes (or its endpoint changes) and makes a new one
     * when it is declared again: a load subscription on the closed client is told, once, so that its subscriber
     * (LoadMonitor) drops it and subscribes on the new client. Before, it ended silently: the subscriber kept it, and
     * the server declared again was never monitored (the Karaf test_openflow black-box test: no blackBoxes).
     */
    @Test
    public void aSubscriptionIsToldWhenItsClientCloses() throws Exception {
        List<Stats> reports = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        try (AgentProcess agent = AgentProcess.start(new AgentProcess.Options())) {
            GrpcAgentClient client = GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1")
                    .port(agent.port()).deadline(AgentProcess.CALL_DEADLINE).build());
            AutoCloseable sub = client.streamLoad(20, reports::add, errors::add);
            waitFor(() -> reports.size() >= 2, "load reports");
            client.close();
            waitFor(() -> !errors.isEmpty(), "the subscription told of the closed client");
            Thread.sleep(300);
            assertEquals("told once: " + errors, 1, errors.size());
            AgentException e = (AgentException) errors.get(0);
            assertEquals(AgentException.Code.CANCELLED, e.code());
            assertTrue(e.getMessage(), e.getMessage().contains("client closed"));
            sub.close();
            AgentException refused = assertThrows(AgentException.class,
                    () -> client.streamLoad(20, reports::add, errors::add));
            assertTrue(refused.getMessage(), refused.getMessage().contains("client closed"));
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }
}
