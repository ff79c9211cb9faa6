package org.metron.drivers.agent;

import io.grpc.Status;

/**
 * A failed agent call: the gRPC status code (the agent's error contract, see agent.proto) and the agent it
 * came from. The message names both, e.g. {@code agent 10.0.0.2:50051: DeployPipeline: INVALID_ARGUMENT:
 * group g1: ...}.
 */
public class AgentException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Status.Code code;
    private final String target;

    public AgentException(String target, String rpc, Status.Code code, String detail, Throwable cause) {
        super("agent " + target + ": " + rpc + ": " + code + (detail == null || detail.isEmpty() ? "" : ": " + detail),
              cause);
        this.code = code;
        this.target = target;
    }

    /** The gRPC status code, e.g. UNAVAILABLE when the agent is unreachable. */
    public Status.Code code() {
        return code;
    }

    /** "host:port" of the agent. */
    public String target() {
        return target;
    }
}
