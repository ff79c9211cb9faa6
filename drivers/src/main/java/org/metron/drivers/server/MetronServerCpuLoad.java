package org.metron.drivers.server;

import com.google.common.collect.ImmutableSortedMap;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;
import org.onosproject.net.behaviour.DeviceCpuStats;
import org.onosproject.net.behaviour.DeviceMemoryStats;
import org.onosproject.net.behaviour.DeviceSystemStatisticsQuery;
import org.onosproject.net.behaviour.DeviceSystemStats;
import org.slf4j.Logger;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static org.slf4j.LoggerFactory.getLogger;

/**
 * CPU load from the agent's GetStats: per core for Metron ({@link CpuLoadDiscovery}) and as ONOS's
 * device-wide {@link DeviceSystemStatisticsQuery} (mean core load in percent).
 */
public class MetronServerCpuLoad extends AbstractMetronBehaviour
        implements CpuLoadDiscovery, DeviceSystemStatisticsQuery {

    private final Logger log = getLogger(getClass());

    @Override
    public Map<Integer, Double> coreLoads() {
        return coreLoads(await(agent().getStats("")));
    }

    /** Core id → load; a load outside 0..1 from the agent is clamped (it is a ratio by contract). */
    static Map<Integer, Double> coreLoads(Stats stats) {
        ImmutableSortedMap.Builder<Integer, Double> b = ImmutableSortedMap.naturalOrder();
        for (CoreStats c : stats.getCoresList()) {
            b.put(c.getCore(), Math.max(0.0, Math.min(1.0, c.getLoad())));
        }
        return b.build();
    }

    @Override
    public Optional<DeviceSystemStats> getDeviceSystemStats() {
        AgentClient agent = agent();
        CompletableFuture<Stats> stats = agent.getStats("");
        CompletableFuture<ServerResources> resources = agent.getResources();
        try {
            Map<Integer, Double> loads = coreLoads(await(stats));
            double mean = loads.values().stream().mapToDouble(Double::doubleValue).average().orElse(0.0);
            long total = await(resources).getMemoryBytes();
            // the agent reports installed memory only, not its use
            DeviceMemoryStats memory = new DeviceMemoryStats();
            memory.setTotal(total);
            return Optional.of(new DeviceSystemStats(memory, new DeviceCpuStats((float) (mean * 100.0))));
        } catch (AgentException e) {
            log.warn("Cannot read CPU load of {}: {}", deviceId(), e.getMessage());
            return Optional.empty();
        }
    }
}
