package org.metron.app.rest;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.MetronException;

import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.ext.ExceptionMapper;
import javax.ws.rs.ext.Provider;

/** Every MetronException becomes a JSON error body with the status its fault calls for. */
@Provider
public class MetronExceptionMapper implements ExceptionMapper<MetronException> {

    /** The one fault → HTTP status table. */
    static int status(MetronException.Fault fault) {
        switch (fault) {
            case INVALID_JSON:
            case INVALID_REQUEST:
                return 400;
            case INVALID_CHAIN:
                return 422;
            case UNKNOWN_CHAIN:
                return 404;
            case DUPLICATE_CHAIN:
            case IMPOSSIBLE_PLACEMENT:
            case BEING_REMOVED:
                return 409;
            case NOT_LEADER:
                return 421;
            case AGENT_FAILURE:
            case SWITCH_FAILURE:
                return 502;
            default:
                return 500;
        }
    }

    @Override
    public Response toResponse(MetronException e) {
        int status = status(e.fault());
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(error(e.fault().name(), e.getMessage(), status).toString()).build();
    }

    /** The error body every refusal answers: {"error": FAULT, "message": what and where, "status": http code}. */
    static ObjectNode error(String fault, String message, int status) {
        return JsonNodeFactory.instance.objectNode().put("error", fault).put("message", message).put("status", status);
    }
}
