package org.metron.drivers.server;

import org.onosproject.net.driver.HandlerBehaviour;

import java.util.Map;

/** Per-core load of a server, what Metron's placement and scaling decide on. */
public interface CpuLoadDiscovery extends HandlerBehaviour {

    /**
     * Load of every core the agent reports: busy cycles / all cycles over its last interval, 0..1.
     *
     * @throws org.metron.drivers.agent.AgentException when the agent cannot be asked
     */
    Map<Integer, Double> coreLoads();
}
