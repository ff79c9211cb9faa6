package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;

/** {@link AgentAccess} of the metron-server driver: the client of the shared {@link AgentClientService}. */
public class MetronServerAgentAccess extends AbstractMetronBehaviour implements AgentAccess {

    @Override
    public AgentClient agent() {
        return super.agent();
    }
}
