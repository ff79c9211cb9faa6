package org.metron.app.api;

import java.util.Objects;

/**
 * Every failure Metron reports to an operator. The fault says what kind of thing went wrong (the REST layer
 * maps it to a status code), the message names what and where. Whoever throws it guarantees that nothing
 * already stored or installed was changed by the failed operation.
 */
public class MetronException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Kinds of failure. */
    public enum Fault {
        /** The request body is not JSON (message gives line:col). */
        INVALID_JSON,
        /** A request parameter (path or query) is malformed; the message names it. */
        INVALID_REQUEST,
        /** The chain is JSON but not a valid chain: schema, unknown NF element, Click error. */
        INVALID_CHAIN,
        /** No chain with that id. */
        UNKNOWN_CHAIN,
        /** A chain with that id already exists. */
        DUPLICATE_CHAIN,
        /** No server/NIC/core/tag/offload device can take the chain. */
        IMPOSSIBLE_PLACEMENT,
        /** A Metron agent could not be reached or refused the request. */
        AGENT_FAILURE,
        /** A switch rejected rules or timed out. */
        SWITCH_FAILURE,
        /** Another controller instance is responsible for the chain. */
        NOT_LEADER,
        /** The chain was deleted and is being removed: it cannot be updated or submitted again until it is gone. */
        BEING_REMOVED,
        /** A bug: an invariant did not hold. */
        INTERNAL
    }

    private final Fault fault;

    public MetronException(Fault fault, String message) {
        super(message);
        this.fault = Objects.requireNonNull(fault);
    }

    public MetronException(Fault fault, String message, Throwable cause) {
        super(message, cause);
        this.fault = Objects.requireNonNull(fault);
    }

    public Fault fault() {
        return fault;
    }
}
