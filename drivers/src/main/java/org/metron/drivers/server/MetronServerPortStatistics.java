package org.metron.drivers.server;

import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.device.PortStatisticsDiscovery;
import org.slf4j.Logger;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.slf4j.LoggerFactory.getLogger;

/** Per-NIC counters from the agent's GetStats. */
public class MetronServerPortStatistics extends AbstractMetronBehaviour implements PortStatisticsDiscovery {

    private final Logger log = getLogger(getClass());

    @Override
    public Collection<PortStatistics> discoverPortStatistics() {
        AgentClient agent = agent();
        CompletableFuture<ServerResources> resources = agent.getResources();
        CompletableFuture<Stats> stats = agent.getStats("");
        try {
            return ServerDescriptions.portStatistics(deviceId(), NicPorts.of(await(resources)), await(stats));
        } catch (AgentException e) {
            log.warn("Cannot read port statistics of {}: {}", deviceId(), e.getMessage());
            return List.of();
        }
    }
}
