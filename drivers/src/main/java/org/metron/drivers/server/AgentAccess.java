package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.driver.HandlerBehaviour;

/**
 * The server's agent client, for applications that drive the agent beyond ONOS's own behaviours (Metron's
 * pipelines, state copies, load streams). Looked up like any behaviour, through ONOS's driver subsystem, so the
 * controller app needs no service of the drivers bundle and sees no gRPC type.
 */
public interface AgentAccess extends HandlerBehaviour {

    /** The one client of this server's agent, shared by every behaviour and application. */
    AgentClient agent();
}
