package org.metron.app.rest;

import org.metron.app.testing.Codecs;
import com.fasterxml.jackson.databind.JsonNode;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.junit.After;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.DrainService;
import org.metron.app.api.MetronService;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.scaling.IngressWatch;
import org.metron.app.scaling.LoadMonitor;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.scaling.ScalingPolicy;
import org.metron.app.scaling.ScalingRequests;
import org.metron.app.scaling.ScalingService;
import org.metron.app.scaling.ServerDrain;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.DrainedServer;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestLeadership;
import org.onlab.osgi.ServiceDirectory;
import org.onosproject.net.DeviceId;

import javax.ws.rs.client.Entity;
import javax.ws.rs.core.Application;
import javax.ws.rs.core.Response;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * Every operator request that goes to a chain's owner (split, merge, a drain's and an undrain's moves) answers 202
 * with {"request", "message"} naming the owner when the owner has not answered within {@link ScalingRequests#WAIT},
 * through the app's JAX-RS application over real HTTP (Jersey on Jetty): instance "b" takes the requests, instance
 * "a" owns the chain ({@link TestLeadership}) and never serves them, so each waits out the real wait (30 s; the four
 * are sent at once). Without {@link PendingRequestMapper} in the application they would be 500s.
 */
public class PendingRequestMapperTest extends JerseyTest {
    private static final ChainId WEB = ChainId.of("web");
    // set in configure(), which JerseyTest's constructor calls before this class's field initializers run
    private LocalStoreFactory factory;
    private World w;
    private ScalingManager b;

    @Override
    protected Application configure() {
        factory = new LocalStoreFactory();
        // three servers: the drained one, the chain's, and one the chain's drain could move it to
        // submitted by a chain manager outside the cluster (as ScalingRequestsTest): a owns the chain, b asks
        w = new World(3, Fixtures.synthesis(), 42, new SingleInstanceLeadership(0));
        w.manager.submit(Fixtures.chainJson("web"));
        TestLeadership cluster = new TestLeadership();
        cluster.instance("a").join(WEB);
        cluster.instance("b").join(WEB);
        b = new ScalingManager(w.store, factory, w.servers, w.switches, w.manager, w.manager, Fixtures.APP,
                Duration.ofSeconds(2), ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS, cluster.instance("b"),
                System::currentTimeMillis, Optional.empty(), IngressWatch.INTERVAL_MS);
        // a drain service per request, as each REST call on a node of its own: the drain and the undrain wait at once
        Supplier<DrainService> drains = () -> new ServerDrain(w.store, w.servers, b::move, b::merge,
                System::currentTimeMillis);
        ServiceDirectory dir = new ServiceDirectory() {
            @Override
            public <T> T get(Class<T> c) {
                return c == MetronService.class ? c.cast(w.manager) : c == ScalingService.class ? c.cast(b)
                        : c == DrainService.class ? c.cast(drains.get()) : Codecs.CONTEXT.offered(c);
            }
        };
        return new ResourceConfig(new MetronWebApplication().getClasses())
                .register(new ChainsWebResourceTest.BasicRoles()).property(MetronWebResource.SERVICES, dir);
    }

    /** One thread per request (the common pool has one thread on two CPUs: the waits would add up). */
    private final java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(4);

    @After
    public void closeScaling() {
        b.close();
        clients.shutdownNow();
    }

    private CompletableFuture<Response> post(String path, Map<String, String> query) {
        return CompletableFuture.supplyAsync(() -> {
            javax.ws.rs.client.WebTarget t = target(path);
            for (Map.Entry<String, String> q : query.entrySet()) {
                t = t.queryParam(q.getKey(), q.getValue());
            }
            return t.request().post(Entity.json(""));
        }, clients);
    }

    @Test
    public void everyRequestLeftToTheOwnerIs202WithTheRequestAndAMessageNamingTheOwner() throws Exception {
        DeviceId running = w.manager.placement(WEB).orElseThrow().server().orElseThrow();
        DeviceId other = w.servers.servers().stream().map(MetronServer::id).filter(s -> !s.equals(running))
                .findFirst().orElseThrow(); // the third server is where the drain can move the chain
        // the other server drained earlier with the chain moved off it: an undrain with moveBack moves it there
        w.store.drained().put(other, new DrainedServer(System.currentTimeMillis(), List.of(WEB)));

        Map<String, CompletableFuture<Response>> asked = Map.of(
                "split", post("scaling/web/split", Map.of("group", "g0")),
                "merge", post("scaling/web/merge", Map.of("keep", "g0", "retire", "g0.1")),
                "drained only in part", post("servers/" + running + "/drain", Map.of()),
                "undrained", post("servers/" + other + "/undrain", Map.of("moveBack", "true")));
        long waitS = ScalingRequests.WAIT.toSeconds() * 3;
        for (Map.Entry<String, CompletableFuture<Response>> e : asked.entrySet()) {
            Response r = e.getValue().get(waitS, TimeUnit.SECONDS);
            String body = r.readEntity(String.class);
            assertEquals(e.getKey() + ": " + body, 202, r.getStatus());
            assertTrue(e.getKey() + ": " + r.getMediaType(), r.getMediaType().toString().startsWith("application/json"));
            JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body);
            String message = json.path("message").asText();
            assertTrue(e.getKey() + ": " + body, message.contains("owner (a)") && message.contains(e.getKey()));
            // the id of the request left for the owner, which is still there for it to take
            String request = json.path("request").asText();
            assertTrue(e.getKey() + ": " + body, !request.isEmpty());
            assertTrue(e.getKey() + ": request " + request + " not left for the owner",
                    requestsLeft().contains(request));
        }
        assertEquals("the chain stays where its owner left it", running,
                w.manager.placement(WEB).orElseThrow().server().orElseThrow());
    }

    /** The requests recorded for owners (ScalingStore's map, over the factory b's store is built on). */
    private java.util.Set<String> requestsLeft() {
        return new org.metron.app.scaling.ScalingStore(factory).requests().snapshot().keySet();
    }
}
