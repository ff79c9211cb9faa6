package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceAgentListener;
import org.onosproject.net.provider.ProviderId;

/**
 * One {@link AgentClient} per Metron server device, shared by the driver's behaviours and the controller app,
 * so every part of ONOS talks to an agent over the same channel.
 */
public interface AgentClientService {

    /**
     * The client of a server; connects on first use to the endpoint set for it, or else the plain-text one
     * its device id names.
     *
     * @throws IllegalArgumentException when the device is not a Metron server
     */
    AgentClient client(DeviceId device);

    /** Sets how to reach a server (TLS, deadline); an existing client to it is closed and replaced. */
    void setEndpoint(DeviceId device, AgentEndpoint endpoint);

    /** Forgets a server and closes its client. */
    void remove(DeviceId device);

    /** True when a client to the server exists (it may still be reconnecting). */
    boolean hasClient(DeviceId device);

    /** True when the client's channel to the server is connected right now; never blocks. */
    boolean isReady(DeviceId device);

    // Mastership, for ONOS's device handshake. Agents have no arbitration of their own (any instance may program
    // them, one acts per chain), so the role ONOS asks for is the role this instance has.

    MastershipRole role(DeviceId device);

    /** Records the role and tells the device's agent listeners (ROLE_MASTER, ROLE_STANDBY or ROLE_NONE). */
    void setRole(DeviceId device, MastershipRole role);

    void addListener(DeviceId device, ProviderId provider, DeviceAgentListener listener);

    void removeListener(DeviceId device, ProviderId provider);
}
