package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.DeviceId;

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
}
