package org.metron.app.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.DrainService;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.scaling.BlackBoxStatus;
import org.metron.app.scaling.ScalingService;
import org.onosproject.net.DeviceId;

import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Service chains: submit, inspect, replace, remove, dry-run. Bodies are chain JSON (docs/contracts.md) with NF
 * configurations inline, or the original Metron netcfg format. Errors are JSON bodies naming the fault.
 */
@Path("chains")
public class ChainsWebResource extends MetronWebResource {

    private MetronService metron() {
        return get(MetronService.class);
    }

    /**
     * Lists all chains with their state.
     *
     * @return 200 OK with {"chains": [...]}
     */
    @GET
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response list() {
        return ok(encodeArray(Chain.class, "chains", metron().chains())).build();
    }

    /**
     * Submits a chain: synthesizes, places and deploys it.
     *
     * @param body chain JSON
     * @return 201 Created with the chain; 202 Accepted with the chain when another instance owns it and left it
     *         FAILED or is still bringing it up; 400/422 bad input, 409 duplicate or impossible placement,
     *         502 agent or switch failure
     */
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({201, 202, 400, 409, 422, 502})
    public Response submit(InputStream body) {
        Chain c = metron().submit(read(body));
        // 202: another instance owns the chain and left it FAILED, or is still bringing it up (the body says which)
        Response.ResponseBuilder r = c.state() == ChainState.FAILED || c.state().bringingUp()
                ? Response.accepted() : Response.created(URI.create("chains/" + c.id().name()));
        return r.entity(encode(c, Chain.class).toString()).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    /**
     * Dry run: synthesis and placement answer, nothing reserved or installed.
     *
     * @param body chain JSON
     * @return 200 OK with classes, groups, offload rules and the placement (or why there is none)
     */
    @POST
    @Path("validate")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 400, 422})
    public Response validate(InputStream body) {
        return ok(encode(metron().validate(read(body)), ValidationReport.class)).build();
    }

    /**
     * One chain with its definition.
     *
     * @param name chain name
     * @return 200 OK; 404 unknown
     */
    @GET
    @Path("{name}")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 404, 422})
    public Response get(@PathParam("name") String name) {
        ChainId id = ChainId.of(name);
        Chain c = metron().chain(id).orElseThrow(() -> unknown(id));
        ObjectNode n = encode(c, Chain.class);
        try {
            n.set("definition", mapper().readTree(c.json()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        n.set("servers", metron().placement(id).map(p -> servers(p, get(DrainService.class).drained().keySet(),
                mapper())).orElseGet(() -> mapper().createArrayNode()));
        n.set("blackBoxes", codec(BlackBoxStatus.class).encode(get(ScalingService.class).blackBoxes(id), this));
        return ok(n).build();
    }

    /**
     * The servers a chain's placement uses (its own, then those its groups were scaled out to), each saying
     * whether it is drained: a chain on a drained server is one its drain could not move.
     */
    public static ArrayNode servers(Placement p, Set<DeviceId> drained, ObjectMapper mapper) {
        ArrayNode a = mapper.createArrayNode();
        Set<DeviceId> used = new LinkedHashSet<>();
        p.server().ifPresent(used::add);
        p.groups().forEach(g -> g.server().ifPresent(used::add));
        used.forEach(s -> a.addObject().put("id", s.toString()).put("drained", drained.contains(s)));
        return a;
    }

    /**
     * Replaces a chain's definition, on any instance: one that does not own the chain records the update and
     * waits for the owner to apply it.
     *
     * @param name chain name
     * @param body chain JSON with the same name
     * @return 200 OK with the chain; 202 Accepted with it when its owner is still applying the update (its
     *         {@code update} says so) or bringing the chain up; the owner's error when it refused the update
     */
    @PUT
    @Path("{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 202, 400, 404, 409, 422, 502})
    public Response update(@PathParam("name") String name, InputStream body) {
        Chain c = metron().update(ChainId.of(name), read(body));
        if (c.updatePending() || c.state().bringingUp() || c.state() == ChainState.DEPLOYED) {
            return Response.accepted(encode(c, Chain.class).toString()).type(MediaType.APPLICATION_JSON_TYPE)
                    .build();
        }
        return ok(encode(c, Chain.class)).build();
    }

    /**
     * Removes a chain and everything it installed. The delete is recorded first and never undone.
     *
     * @param name chain name
     * @return 204 No Content when nothing of it is left; 202 Accepted with the chain (REMOVING, what is left in
     *         pending) when something could not be removed yet (it goes when its device answers again); 404 unknown
     */
    @DELETE
    @Path("{name}")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({202, 204, 404, 422})
    public Response remove(@PathParam("name") String name) {
        Optional<Chain> left = metron().remove(ChainId.of(name));
        if (left.isPresent()) {
            return Response.accepted(encode(left.get(), Chain.class).toString())
                    .type(MediaType.APPLICATION_JSON_TYPE).build();
        }
        return Response.noContent().build();
    }

    /**
     * Traffic classes of a chain, first-match order, with tags and cores.
     *
     * @param name chain name
     * @return 200 OK with {"classes": [...]}
     */
    @GET
    @Path("{name}/classes")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 404, 422})
    public Response classes(@PathParam("name") String name) {
        return ok(encodeArray(TrafficClassInfo.class, "classes", metron().trafficClasses(ChainId.of(name)))).build();
    }

    private static MetronException unknown(ChainId id) {
        return new MetronException(MetronException.Fault.UNKNOWN_CHAIN, "no chain named '" + id + "'");
    }

    private static String read(InputStream body) {
        try {
            return body == null ? "" : new String(body.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new MetronException(MetronException.Fault.INVALID_JSON, "cannot read request body: "
                    + e.getMessage(), e);
        }
    }
}
