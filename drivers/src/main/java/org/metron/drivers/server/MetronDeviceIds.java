package org.metron.drivers.server;

import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.DeviceId;

import static com.google.common.base.Preconditions.checkArgument;

/** Metron servers are ONOS devices {@code metron:<host>:<port>}, the port being the agent's gRPC port. */
public final class MetronDeviceIds {

    public static final String SCHEME = "metron";

    private MetronDeviceIds() {
    }

    public static DeviceId deviceId(AgentEndpoint endpoint) {
        return DeviceId.deviceId(SCHEME + ":" + endpoint.target());
    }

    public static boolean isMetronServer(DeviceId id) {
        return SCHEME.equals(id.uri().getScheme());
    }

    /** The plain-text endpoint the id names (TLS and deadlines come from configuration). */
    public static AgentEndpoint endpoint(DeviceId id) {
        checkArgument(isMetronServer(id), "device %s is not a Metron server (expected %s:<host>:<port>)", id, SCHEME);
        return AgentEndpoint.parse(id.uri().getSchemeSpecificPart());
    }
}
