package org.metron.embedded.contract;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.ServerResources;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.GrpcAgentClient;
import org.metron.drivers.server.MetronDeviceIds;
import org.metron.drivers.testing.AgentProcess;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * What the controller core may assume of {@link ServerRegistry} (spi/ServerRegistry), asked of ONOS's implementation
 * (over the devices the drivers' server provider makes from netcfg, the metron-server driver's agent client) and of
 * the embedded host's (over its topology file), both with one server declared whose agent is a real metron-agent:
 * the server is listed under its id with the cabling it was declared with; its agent client answers the agent's
 * own resources (cores, NICs) and health; when the agent dies the server stays known and its calls fail with
 * {@link AgentException} (never hang, never another exception); when the agent comes back on the same address the
 * same server answers again, with the new agent's boot id, without being declared again.
 *
 * <p>One difference is by design and pinned by {@link #listsAServerWhoseAgentIsDown()}: ONOS lists only available
 * devices, and the provider takes a server whose agent stopped answering off them (ONOS's device events are its
 * failover signal), while the embedded host keeps listing it because its {@code AgentWatch}, which detects the
 * failure there, walks the listed servers.
 */
public abstract class ServerRegistryContract {
    /** How long a registry may take to see a change of its agent (ONOS's provider probes every 500 ms). */
    private static final long SETTLE_MS = 15_000;
    private static final ConnectPoint CABLE = ConnectPoint.deviceConnectPoint("of:0000000000000001/3");
    private static final DeviceId UNKNOWN = DeviceId.deviceId("metron:127.0.0.1:1");

    private AgentProcess agent;
    private int port;
    private DeviceId server;
    private String nic;
    private ServerRegistry registry;

    /**
     * A fresh implementation with one server declared: {@code id} (its agent at the address the id names), its NICs
     * cabled as {@code nics} says.
     */
    protected abstract ServerRegistry registry(DeviceId id, Map<String, ConnectPoint> nics) throws Exception;

    /** Whether the implementation lists a server while its agent does not answer (see the class comment). */
    protected abstract boolean listsAServerWhoseAgentIsDown();

    /** Stops what {@link #registry} started. */
    protected void stop() throws Exception {
    }

    @Before
    public void declare() throws Exception {
        port = AgentProcess.freePort();
        agent = AgentProcess.start(new AgentProcess.Options().listenPort(port));
        server = MetronDeviceIds.deviceId(endpoint());
        nic = direct(AgentClient::getResources).getNics(0).getName();
        registry = registry(server, Map.of(nic, CABLE));
        await("the server listed", () -> listed().contains(server));
    }

    @After
    public void tearDown() throws Exception {
        try {
            stop();
        } finally {
            if (agent != null) {
                agent.close();
            }
        }
    }

    private AgentEndpoint endpoint() {
        return AgentEndpoint.builder().host("127.0.0.1").port(port).deadline(AgentProcess.CALL_DEADLINE).build();
    }

    /** What the agent answers a client of the test's own: what the registry's client must answer too. */
    private <T> T direct(java.util.function.Function<AgentClient, CompletableFuture<T>> call) throws Exception {
        try (GrpcAgentClient c = GrpcAgentClient.connect(endpoint())) {
            return call.apply(c).get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS);
        }
    }

    private List<DeviceId> listed() {
        return registry.servers().stream().map(MetronServer::id).collect(Collectors.toList());
    }

    private AgentClient client() {
        return registry.server(server).orElseThrow(() -> new AssertionError(server + " not known")).agent();
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long end = System.currentTimeMillis() + SETTLE_MS;
        while (!done.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                fail(what + ": not within " + SETTLE_MS + " ms");
            }
            Thread.sleep(50);
        }
    }

    /** Whether a Health call through the registry's client succeeds now (any failure: an AgentException). */
    private boolean answers() {
        try {
            return get(client().health()).getServing();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof AgentException)) {
                throw new AssertionError("a failed call must fail with AgentException", e.getCause());
            }
            return false;
        } catch (Exception e) {
            throw new AssertionError("Health through the registry did not end", e);
        }
    }

    @Test
    public void theDeclaredServerIsListedWithItsCablingAndNothingElseIsKnown() {
        assertEquals(List.of(server), listed());
        MetronServer s = registry.server(server).orElseThrow();
        assertEquals(server, s.id());
        assertEquals(Map.of(nic, CABLE), s.attachments());
        assertEquals(CABLE, s.attachment(nic).orElseThrow());
        assertTrue(s.attachment("no-such-nic").isEmpty());
        assertTrue(registry.server(UNKNOWN).isEmpty());
        assertTrue("a switch is no server", registry.server(CABLE.deviceId()).isEmpty());
        assertEquals(List.of(), registry.refusedConfigs());
    }

    @Test
    public void itsClientAnswersTheAgentsOwnResourcesAndHealth() throws Exception {
        ServerResources own = direct(AgentClient::getResources);
        ServerResources seen = get(client().getResources());
        assertEquals(own.getCoresList().stream().map(Core::getId).collect(Collectors.toList()),
                seen.getCoresList().stream().map(Core::getId).collect(Collectors.toList()));
        assertEquals(own.getNicsList().stream().map(Nic::getName).collect(Collectors.toList()),
                seen.getNicsList().stream().map(Nic::getName).collect(Collectors.toList()));
        assertEquals(own.getHostname(), seen.getHostname());
        HealthReply health = get(client().health());
        assertTrue(health.getServing());
        assertEquals(direct(AgentClient::health).getBootId(), health.getBootId());
        assertEquals("127.0.0.1:" + port, client().target());
    }

    @Test
    public void aDeadAgentsServerStaysKnownAndItsCallsFailWithAgentException() throws Exception {
        agent.kill();
        await("calls through the registry fail", () -> !answers());
        try {
            get(client().getResources());
            fail("resources of a dead agent");
        } catch (ExecutionException e) {
            assertTrue("failed with " + e.getCause(), e.getCause() instanceof AgentException);
        }
        assertEquals(server, registry.server(server).orElseThrow().id());
        if (listsAServerWhoseAgentIsDown()) {
            assertEquals(List.of(server), listed());
        } else {
            await("the server no longer listed", () -> !listed().contains(server));
        }
    }

    @Test
    public void anAgentBackOnItsAddressAnswersThroughTheSameServer() throws Exception {
        long before = get(client().health()).getBootId();
        agent.kill();
        agent.close();
        await("calls through the registry fail", () -> !answers());
        agent = AgentProcess.start(new AgentProcess.Options().listenPort(port));
        await("calls through the registry answer again", this::answers);
        await("the server listed again", () -> listed().equals(List.of(server)));
        long after = get(client().health()).getBootId();
        assertTrue("the restarted agent's boot id", after != before);
        assertEquals(direct(AgentClient::health).getBootId(), after);
        assertEquals(Map.of(nic, CABLE), registry.server(server).orElseThrow().attachments());
        assertEquals(nic, get(client().getResources()).getNics(0).getName());
    }
}
