package org.metron.app.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.onosproject.store.service.StorageException;

import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.ext.ExceptionMapper;
import javax.ws.rs.ext.Provider;

/**
 * ONOS's cluster store failed a call (a node of the cluster down, a Raft partition electing a new leader, a
 * timeout): 503 naming the failure, with Retry-After, instead of a bare 500. A read changed nothing; a write may
 * or may not have been recorded (the store did not say), so the message tells the client to read before retrying.
 */
@Provider
public class StorageExceptionMapper implements ExceptionMapper<StorageException> {
    static final int RETRY_AFTER_S = 2;

    @Override
    public Response toResponse(StorageException e) {
        String what = e.getClass().getSimpleName(); // Unavailable, Timeout, ... or StorageException itself
        ObjectNode body = MetronExceptionMapper.error("STORE_UNAVAILABLE", "ONOS's cluster store did not answer (" + what
                + (e.getCause() == null ? "" : ": " + e.getCause()) + "), as when a cluster node is down or a "
                + "store partition elects a new leader; a read changed nothing, a write may or may not have been "
                + "recorded: read the chain, then retry", 503);
        return Response.status(503).header("Retry-After", RETRY_AFTER_S).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(body.toString()).build();
    }
}
