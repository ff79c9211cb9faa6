package org.metron.drivers.agent;

import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.drivers.testing.AgentProcess;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Real gRPC against a port nobody listens on: errors are AgentExceptions naming the agent. */
public class UnreachableAgentTest {

    private static AgentException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        assertTrue("expected AgentException, got " + e.getCause(), e.getCause() instanceof AgentException);
        return (AgentException) e.getCause();
    }

    @Test
    public void writesFailFastWithUnavailable() throws Exception {
        AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(AgentProcess.freePort())
                .deadline(Duration.ofSeconds(20)).build();
        try (GrpcAgentClient c = GrpcAgentClient.connect(ep)) {
            long t0 = System.nanoTime();
            AgentException e = failure(c.deployPipeline(DeployPipelineRequest.newBuilder()
                                                                .setPipelineId("p").build()));
            assertEquals(AgentException.Code.UNAVAILABLE, e.code());
            assertEquals(ep.target(), e.target());
            assertTrue(e.getMessage(), e.getMessage().startsWith("agent " + ep.target() + ": DeployPipeline: UNAVAILABLE"));
            assertTrue("writes are not retried until the deadline",
                       System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10));
        }
    }

    @Test
    public void readsRetryUntilTheDeadlineThenFail() throws Exception {
        AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(AgentProcess.freePort())
                .deadline(Duration.ofMillis(800)).build();
        try (GrpcAgentClient c = GrpcAgentClient.connect(ep)) {
            long t0 = System.nanoTime();
            AgentException e = failure(c.health());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(AgentException.Code.UNAVAILABLE, e.code());
            assertTrue(e.getMessage(), e.getMessage().contains("Health"));
            assertTrue("retried into the deadline, took " + ms + " ms", ms >= 300);
        }
    }

    @Test
    public void callsAfterCloseFailCancelled() throws Exception {
        GrpcAgentClient c = GrpcAgentClient.connect(AgentEndpoint.of("127.0.0.1", AgentProcess.freePort()));
        c.close();
        assertEquals(AgentException.Code.CANCELLED, failure(c.getResources()).code());
    }

    @Test
    public void badTlsMaterialIsRejectedAtConnect() throws Exception {
        java.nio.file.Path junk = java.nio.file.Files.createTempFile("ca", ".pem");
        try {
            java.nio.file.Files.writeString(junk, "not a certificate");
            AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(1).trustCerts(junk).build();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                                                      () -> GrpcAgentClient.connect(ep));
            assertTrue(e.getMessage(), e.getMessage().contains(junk.toString()));
        } finally {
            java.nio.file.Files.delete(junk);
        }
    }
}
