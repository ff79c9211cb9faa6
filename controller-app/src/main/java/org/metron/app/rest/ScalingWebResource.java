package org.metron.app.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RequestRules;
import org.metron.app.scaling.ChainScaling;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingOperation;
import org.metron.app.scaling.ScalingRequests;
import org.metron.app.scaling.ScalingService;

import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import java.util.stream.Collectors;

/**
 * Scaling under /onos/metron/scaling: each chain's groups (tag, core, classes), latest load and history of
 * decisions; operator-requested split and merge. Errors go through the app's MetronException mapper.
 */
@Path("scaling")
public class ScalingWebResource extends MetronWebResource {

    private ScalingService scaling() {
        return get(ScalingService.class);
    }

    private MetronService metron() {
        return get(MetronService.class);
    }

    /**
     * Every placed chain's groups, latest load and history.
     *
     * @return 200 OK with {"chains": [...]}
     */
    @GET
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200})
    public Response all() {
        ObjectNode root = encodeArray(ChainScaling.class, "chains", metron().placements().stream()
                .map(Placement::chainId).sorted().map(id -> ChainScaling.of(id, metron(), scaling()))
                .collect(Collectors.toList()));
        root.set("inProgress", codec(ScalingOperation.class).encode(scaling().inProgress(), this));
        return ok(root).build();
    }

    /**
     * One chain: groups, latest load, history.
     *
     * @return 200 OK; 404 for an unknown chain
     */
    @GET
    @Path("{chain}")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 404, 422})
    public Response one(@PathParam("chain") String chain) {
        return ok(encode(ChainScaling.of(existing(chain), metron(), scaling()), ChainScaling.class)).build();
    }

    /**
     * Splits a group now.
     *
     * @return 200 OK with the history entry (from the chain's owner, whichever instance received the request); 202
     *         when the owner has not finished within {@link ScalingRequests#WAIT}; 404 unknown chain, 422 unknown group, 409 no core/tag or one class,
     *         502 agent/switch failure (rolled back)
     */
    @POST
    @Path("{chain}/split")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 202, 404, 409, 422, 502})
    public Response split(@PathParam("chain") String chain, @QueryParam("group") String group) {
        ChainId id = existing(chain);
        RequestRules.required("group", group, "split of " + id);
        return event(scaling().split(id, group));
    }

    /**
     * Merges group {@code retire} into {@code keep} now.
     *
     * @return as {@link #split}
     */
    @POST
    @Path("{chain}/merge")
    @Produces(MediaType.APPLICATION_JSON)
    @Statuses({200, 202, 404, 409, 422, 502})
    public Response merge(@PathParam("chain") String chain, @QueryParam("keep") String keep,
                          @QueryParam("retire") String retire) {
        ChainId id = existing(chain);
        RequestRules.required("keep", keep, "merge of " + id);
        RequestRules.required("retire", retire, "merge of " + id);
        return event(scaling().merge(id, keep, retire));
    }

    /**
     * The operation's history entry, wherever it ran (the chain's owner runs it: docs/contracts.md#chain-ownership);
     * an owner that has not finished it within the wait is 202 ({@link PendingRequestMapper}).
     */
    private Response event(ScalingEvent e) {
        return ok(encode(e, ScalingEvent.class)).build();
    }

    private ChainId existing(String name) {
        ChainId id = ChainId.of(name);
        if (metron().chain(id).isEmpty()) {
            throw new MetronException(MetronException.Fault.UNKNOWN_CHAIN, "no chain named '" + name + "'");
        }
        return id;
    }
}
