package org.metron.app.rest;

import org.metron.app.testing.Codecs;
import com.fasterxml.jackson.databind.JsonNode;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronService;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onlab.osgi.ServiceDirectory;
import org.onosproject.net.DeviceId;

import javax.annotation.Priority;
import javax.ws.rs.Priorities;
import javax.ws.rs.client.Entity;
import javax.ws.rs.container.ContainerRequestContext;
import javax.ws.rs.container.ContainerRequestFilter;
import javax.ws.rs.container.PreMatching;
import javax.ws.rs.core.SecurityContext;
import java.security.Principal;
import javax.ws.rs.core.Application;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import java.io.IOException;
import java.time.Instant;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The REST API over real HTTP (Jersey on Jetty) against the real ChainManager. */
public class ChainsWebResourceTest extends JerseyTest {
    private World w;
    /** Not started: the chain's view reads its black boxes from it (none here). */
    private org.metron.app.scaling.ScalingManager scaling;

    @org.junit.After
    public void closeScaling() {
        scaling.close();
    }

    @Override
    protected Application configure() {
        w = new World(2, Fixtures.synthesis(), 42);
        scaling = Fixtures.scaling(w, new org.metron.app.local.LocalStoreFactory());
        ServiceDirectory dir = new ServiceDirectory() {
            @Override
            public <T> T get(Class<T> c) {
                return c == MetronService.class ? c.cast(w.manager)
                        : c == org.metron.app.scaling.ScalingService.class ? c.cast(scaling)
                        : c == org.metron.app.api.DrainService.class ? c.cast(new org.metron.app.scaling.ServerDrain(
                                w.store, w.servers, w.manager, scaling::merge, System::currentTimeMillis))
                        : Codecs.CONTEXT.offered(c);
            }
        };
        return new ResourceConfig(new MetronWebApplication().getClasses())
                .register(new BasicRoles()).property(MetronWebResource.SERVICES, dir);
    }

    /**
     * Stands in for Karaf's authentication: the header X-Role names the caller's role (admin by default), so
     * ONOS's own AuthorizationFilter decides what the caller may do.
     */
    @PreMatching
    @Priority(Priorities.AUTHENTICATION)
    static final class BasicRoles implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext ctx) {
            String role = ctx.getHeaderString("X-Role") == null ? "admin" : ctx.getHeaderString("X-Role");
            ctx.setSecurityContext(new SecurityContext() {
                @Override
                public Principal getUserPrincipal() {
                    return () -> role + "-user";
                }

                @Override
                public boolean isUserInRole(String r) {
                    return r.equals(role) || ("admin".equals(role) && "viewer".equals(r));
                }

                @Override
                public boolean isSecure() {
                    return false;
                }

                @Override
                public String getAuthenticationScheme() {
                    return SecurityContext.BASIC_AUTH;
                }
            });
        }
    }

    @Test
    public void viewersMayReadButNotWrite() {
        assertEquals(200, target("chains").request().header("X-Role", "viewer").get().getStatus());
        assertEquals(403, target("chains").request().header("X-Role", "viewer")
                .post(Entity.entity(Fixtures.chainJson("v"), MediaType.APPLICATION_JSON_TYPE)).getStatus());
        assertTrue(w.manager.chains().isEmpty());
    }

    private static JsonNode json(Response r) throws IOException {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.readEntity(String.class));
    }

    private Response post(String path, String body) {
        return target(path).request().post(Entity.entity(body, MediaType.APPLICATION_JSON_TYPE));
    }

    @Test
    public void postGetListDelete() throws IOException {
        Response created = post("chains", Fixtures.chainJson("web"));
        assertEquals(201, created.getStatus());
        assertEquals("ACTIVE", json(created).get("state").asText());
        assertTrue(created.getLocation().toString().endsWith("chains/web"));

        JsonNode one = json(target("chains/web").request().get());
        assertEquals("fw", one.get("definition").get("nfs").get(0).get("name").asText());
        assertEquals(1, json(target("chains").request().get()).get("chains").size());

        JsonNode classes = json(target("chains/web/classes").request().get()).get("classes");
        assertEquals(3, classes.size());
        assertEquals("02:4d:00:01:00:00", classes.get(0).get("mac").asText());

        assertEquals(2, json(target("tags").request().get()).get("tags").size());
        JsonNode placements = json(target("placements").request().get()).get("placements");
        assertEquals(Fixtures.S1, placements.get(0).get("offloadDevice").asText());
        JsonNode servers = json(target("servers").request().get()).get("servers");
        assertEquals(2, servers.size());
        assertEquals(4, servers.get(0).get("cores").size());
        assertEquals(0.1, servers.get(0).get("cores").get(0).get("load").asDouble(), 1e-9);
        assertEquals(5, json(target("rules").queryParam("device", Fixtures.S1).request().get())
                .get("rules").size());
        assertEquals(3, json(target("classes").request().get()).get("classes").size());

        assertEquals(204, target("chains/web").request().delete().getStatus());
        assertEquals(0, json(target("chains").request().get()).get("chains").size());
        assertEquals(0, w.switches.total());
    }

    /** GET /servers lists the server netcfg entries ONOS refused (an empty list when there are none). */
    @Test
    public void serversListTheRefusedServerNetcfgEntries() throws IOException {
        assertEquals(0, json(target("servers").request().get()).get("refusedConfigs").size());
        w.servers.refuse(new ServerConfigErrors.Refused(DeviceId.deviceId("metron:10.0.0.7:50051"), "deadlineMs",
                "not a positive number: soon", Instant.parse("2026-11-28T10:00:00Z")));
        JsonNode root = json(target("servers").request().get());
        assertEquals(2, root.get("servers").size());
        JsonNode r = root.get("refusedConfigs");
        assertEquals(1, r.size());
        assertEquals("metron:10.0.0.7:50051", r.get(0).get("device").asText());
        assertEquals("deadlineMs", r.get(0).get("field").asText());
        assertEquals("not a positive number: soon", r.get(0).get("reason").asText());
        assertEquals("2026-11-28T10:00:00Z", r.get(0).get("time").asText());
        assertEquals("viewers may read it", 200, target("servers").request().header("X-Role", "viewer").get()
                .getStatus());
    }

    /**
     * DELETE of a chain whose agent is dead: 202 with the chain REMOVING and what is left (never 502, never brought
     * back); GET shows the pending removal; a second DELETE tries again and answers the same; once the agent is
     * back the DELETE answers 204 and the chain is gone. A PUT or POST of the deleted chain is refused (409).
     */
    @Test
    public void deleteOfAChainWhoseAgentIsDeadAnswers202WithWhatIsLeft() throws IOException {
        assertEquals(201, post("chains", Fixtures.chainJson("web")).getStatus());
        String server = w.manager.placement(ChainId.of("web")).get().server().get().toString();
        int d = server.equals(Fixtures.serverId(0)) ? 0 : 1;
        w.agents.get(d).unreachable(true);

        for (int attempt = 0; attempt < 2; attempt++) {
            Response r = target("chains/web").request().delete();
            assertEquals(202, r.getStatus());
            JsonNode left = json(r);
            assertEquals("REMOVING", left.get("state").asText());
            assertEquals(2, left.get("pending").size());
            assertEquals(server, left.get("pending").get(0).get("device").asText());
            assertEquals("pipeline web", left.get("pending").get(0).get("what").asText());
            assertTrue(left.get("pending").get(0).get("why").asText().contains("connection refused"));
        }
        JsonNode got = json(target("chains/web").request().get());
        assertEquals("REMOVING", got.get("state").asText());
        assertEquals(2, got.get("pending").size());
        Response put = target("chains/web").request().put(Entity.entity(Fixtures.chainJson("web"),
                MediaType.APPLICATION_JSON_TYPE));
        assertEquals(409, put.getStatus());
        assertEquals("BEING_REMOVED", json(put).get("error").asText());
        Response again = post("chains", Fixtures.chainJson("web"));
        assertEquals(409, again.getStatus());
        assertEquals("BEING_REMOVED", json(again).get("error").asText());
        assertEquals(ChainState.REMOVING, w.manager.chain(ChainId.of("web")).get().state());

        w.agents.get(d).unreachable(false);
        assertEquals(204, target("chains/web").request().delete().getStatus());
        assertEquals(404, target("chains/web").request().get().getStatus());
        assertTrue(w.agents.get(d).pipelines().isEmpty());
    }

    @Test
    public void errorBodiesNameTheFaultAndLeaveChainsAlone() throws IOException {
        assertEquals(201, post("chains", Fixtures.chainJson("keep")).getStatus());

        Response bad = post("chains", "{\"name\": \"x\", ");
        assertEquals(400, bad.getStatus());
        JsonNode b = json(bad);
        assertEquals("INVALID_JSON", b.get("error").asText());
        assertTrue(b.get("message").asText(), b.get("message").asText().contains("line 1"));

        Response elem = post("chains", Fixtures.chainJson("e").replace("IPFilter", "Bogus"));
        assertEquals(422, elem.getStatus());
        assertTrue(json(elem).get("message").asText().contains("Bogus"));

        Response busy = post("chains", Fixtures.chainJson("same-ingress"));
        assertEquals(409, busy.getStatus());
        String overlap = json(busy).get("message").asText();
        assertTrue(overlap, overlap.startsWith("chain same-ingress's traffic and chain keep's traffic both enter at "
                + Fixtures.S1 + "/1 and overlap"));

        Response big = post("chains", Fixtures.chainJsonAt("big", "mac", 16, 1, 2));
        assertEquals(409, big.getStatus());
        assertEquals("IMPOSSIBLE_PLACEMENT", json(big).get("error").asText());

        w.agents.forEach(a -> a.unreachable(true));
        Response down = post("chains", Fixtures.chainJsonAt("down", 3));
        assertEquals(502, down.getStatus());
        JsonNode d = json(down);
        assertEquals("AGENT_FAILURE", d.get("error").asText());
        assertTrue(d.get("message").asText(), d.get("message").asText().contains("unreachable"));
        w.agents.forEach(a -> a.unreachable(false));

        assertEquals(409, post("chains", Fixtures.chainJson("keep")).getStatus());
        assertEquals(404, target("chains/none").request().get().getStatus());
        assertEquals("UNKNOWN_CHAIN", json(target("chains/none").request().delete()).get("error").asText());
        assertEquals(422, target("chains/bad name").request().get().getStatus());

        assertEquals(ChainState.ACTIVE, w.manager.chain(ChainId.of("keep")).get().state());
        assertEquals(8, w.switches.total());
    }

    @Test
    public void validateAndUpdateAndNetcfg() throws IOException {
        JsonNode v = json(post("chains/validate", Fixtures.chainJson("v")));
        assertTrue(v.get("placeable").asBoolean());
        assertEquals(2, v.get("groups").asInt());
        assertEquals(0, w.switches.total());

        assertEquals(201, post("chains", org.metron.app.impl.NetcfgTranslatorTestAccess.NETCFG).getStatus());
        assertEquals("vlan", json(target("chains/fw").request().get()).get("tagType").asText());

        Response put = target("chains/fw").request().put(Entity.entity(Fixtures.chainJson("fw"),
                MediaType.APPLICATION_JSON_TYPE));
        assertEquals(200, put.getStatus());
        assertEquals("mac", json(target("chains/fw").request().get()).get("tagType").asText());
    }
}
