package org.metron.app.rest;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.scaling.ScalingRequests;

import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.ext.ExceptionMapper;
import javax.ws.rs.ext.Provider;

/**
 * A request this instance recorded for a chain's owner (a split, a merge, a drain's move: the owner runs it,
 * docs/contracts.md#chain-ownership) that the owner has not answered within the wait: 202 with the request's id and
 * a message naming the owner; the owner carries on.
 */
@Provider
public class PendingRequestMapper implements ExceptionMapper<ScalingRequests.Pending> {
    @Override
    public Response toResponse(ScalingRequests.Pending p) {
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("request", p.request()).put("message",
                p.getMessage());
        return Response.status(Response.Status.ACCEPTED).type(MediaType.APPLICATION_JSON_TYPE).entity(body.toString())
                .build();
    }
}
