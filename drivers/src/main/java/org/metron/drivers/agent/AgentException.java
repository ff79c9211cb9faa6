package org.metron.drivers.agent;

/**
 * A failed agent call: the status code (the agent's error contract, see agent.proto) and the agent it came from.
 * The message names both, e.g. {@code agent 10.0.0.2:50051: DeployPipeline: INVALID_ARGUMENT: group g1: ...}.
 * The code is this package's own {@link Code}, not gRPC's: gRPC lives inside the drivers bundle (embedded), so
 * nothing outside it may see a gRPC type (the controller app would link against another copy of gRPC's classes).
 */
public class AgentException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The canonical status codes the agent answers with (the same names and meanings as gRPC's). */
    public enum Code {
        OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED,
        RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE,
        DATA_LOSS, UNAUTHENTICATED
    }

    private final Code code;
    private final String target;

    public AgentException(String target, String rpc, Code code, String detail, Throwable cause) {
        super("agent " + target + ": " + rpc + ": " + code + (detail == null || detail.isEmpty() ? "" : ": " + detail),
              cause);
        this.code = code;
        this.target = target;
    }

    /** The status code, e.g. UNAVAILABLE when the agent is unreachable. */
    public Code code() {
        return code;
    }

    /** "host:port" of the agent. */
    public String target() {
        return target;
    }
}
