package org.metron.app.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport;
import org.metron.app.api.DrainService;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RequestRules;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.drivers.provider.ServerConfigErrors;
import org.onosproject.net.DeviceId;

import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;

/** What Metron holds across chains: traffic classes, tags, placements, servers with core load, rules. */
@Path("")
public class InventoryWebResource extends MetronWebResource {

    private MetronService metron() {
        return get(MetronService.class);
    }

    /**
     * Traffic classes of every chain.
     *
     * @return 200 OK with {"classes": [...]}
     */
    @GET
    @Path("classes")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response classes() {
        ObjectNode root = mapper().createObjectNode();
        ArrayNode a = root.putArray("classes");
        for (ChainId id : metron().placements().stream().map(p -> p.chainId()).sorted()
                .toArray(ChainId[]::new)) {
            try {
                a.addAll(codec(TrafficClassInfo.class).encode(metron().trafficClasses(id), this));
            } catch (MetronException e) {
                if (e.fault() != MetronException.Fault.UNKNOWN_CHAIN) {
                    throw e;
                }
                // removed since the placements were read: it has no classes any more
            }
        }
        return ok(root).build();
    }

    /**
     * Allocated group tags.
     *
     * @return 200 OK with {"tags": [...]}
     */
    @GET
    @Path("tags")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response tags() {
        return ok(encodeArray(TagAllocation.class, "tags", metron().tags())).build();
    }

    /**
     * Where each chain runs, and where failover moves are readied while a lost server's deadline runs.
     *
     * @return 200 OK with {"placements": [...], "readied": [...]}
     */
    @GET
    @Path("placements")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response placements() {
        ObjectNode root = encodeArray(Placement.class, "placements", metron().placements());
        // failover moves readied during a lost server's deadline: the cores and tags they hold
        root.set("readied", codec(Placement.class).encode(metron().readied(), this));
        return ok(root).build();
    }

    /**
     * Metron servers with per-core load, as their agents report now, and the server netcfg entries ONOS refused.
     *
     * @return 200 OK with {"servers": [...], "refusedConfigs": [...]}
     */
    @GET
    @Path("servers")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response servers() {
        ObjectNode root = encodeArray(ServerInfo.class, "servers", metron().servers());
        root.set("refusedConfigs", codec(ServerConfigErrors.Refused.class).encode(metron().refusedServerConfigs(),
                this));
        return ok(root).build();
    }

    /**
     * Drains a server for planned work (docs/failover.md#planned-restart-drain): every chain and scaled-out group
     * on it moves to other servers hitless, and nothing is placed on it until it is undrained.
     *
     * @param server server device id (e.g. metron:srv1)
     * Any instance takes it: each move runs on its chain's owner (ScalingService#move).
     *
     * @return 200 OK with {"server", "drained": true, "moves": [...]}; 202 a chain's owner has not finished its move
     *         within the wait (it carries on; {@link PendingRequestMapper}); 400 unknown server; 409 nothing could take
     *         what runs on it (nothing moved) or a move failed half way (the message says what moved and what did
     *         not); 421 a chain's ownership moved while its move ran; 502 agent or switch failure of a move (it runs
     *         on untouched)
     */
    @POST
    @Path("servers/{server}/drain")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 202, 400, 409, 421, 502})
    public Response drain(@PathParam("server") String server) {
        return ok(encode(get(DrainService.class).drain(server(server)), DrainReport.class)).build();
    }

    /**
     * Makes a drained server take chains again; with {@code moveBack=true} the chains its drain moved off come back
     * to it, make-before-break.
     *
     * @return 200 OK with {"server", "drained": false, "moves": [...]}; 400 unknown or not drained server; as
     *         {@link #drain} for a move back that fails
     */
    @POST
    @Path("servers/{server}/undrain")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 202, 400, 409, 421, 502})
    public Response undrain(@PathParam("server") String server, @QueryParam("moveBack") String moveBack) {
        if (moveBack != null && !moveBack.equals("true") && !moveBack.equals("false")) {
            throw new MetronException(MetronException.Fault.INVALID_REQUEST, "query parameter moveBack '" + moveBack
                    + "' is neither true nor false");
        }
        return ok(encode(get(DrainService.class).undrain(server(server), "true".equals(moveBack)), DrainReport.class))
                .build();
    }

    private static DeviceId server(String id) {
        if (!RequestRules.deviceId(id)) {
            throw new MetronException(MetronException.Fault.INVALID_REQUEST, "'" + id + "' is not a server device "
                    + "id (e.g. metron:srv1)");
        }
        return DeviceId.deviceId(id);
    }

    /**
     * Switch rules Metron installed, with counters.
     *
     * @param device only this device (optional)
     * @return 200 OK with {"rules": [...]}
     */
    @GET
    @Path("rules")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 400})
    public Response rules(@QueryParam("device") String device) {
        return ok(encodeArray(RuleInfo.class, "rules", metron().rules(device == null || device.isEmpty() ? null
                : device(device)))).build();
    }

    /**
     * This API's contract (Swagger 2.0).
     *
     * @return 200 OK with the document
     */
    @GET
    @Path("swagger.json")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response apiDocument() {
        return Response.ok(ApiDocument.json(), MediaType.APPLICATION_JSON_TYPE).build();
    }

    private static DeviceId device(String id) {
        try {
            return DeviceId.deviceId(id);
        } catch (IllegalArgumentException e) {
            throw new MetronException(MetronException.Fault.INVALID_REQUEST, "query parameter device '" + id
                    + "' is not a device id (e.g. of:0000000000000001): " + e.getMessage(), e);
        }
    }
}
