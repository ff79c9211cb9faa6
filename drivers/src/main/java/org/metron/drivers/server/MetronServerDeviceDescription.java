package org.metron.drivers.server;

import org.metron.drivers.agent.AgentException;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceDescriptionDiscovery;
import org.onosproject.net.device.PortDescription;
import org.slf4j.Logger;

import java.util.List;

import static org.slf4j.LoggerFactory.getLogger;

/** Device (CPU, cores, memory, agent version) and ports (one per NIC) from the agent's GetResources. */
public class MetronServerDeviceDescription extends AbstractMetronBehaviour implements DeviceDescriptionDiscovery {

    private final Logger log = getLogger(getClass());

    /** @return the description, or null when the agent cannot be reached (ONOS's convention) */
    @Override
    public DeviceDescription discoverDeviceDetails() {
        try {
            return ServerDescriptions.device(deviceId(), await(agent().getResources()));
        } catch (AgentException e) {
            log.warn("Cannot describe {}: {}", deviceId(), e.getMessage());
            return null;
        }
    }

    @Override
    public List<PortDescription> discoverPortDetails() {
        try {
            return ServerDescriptions.ports(await(agent().getResources()));
        } catch (AgentException e) {
            log.warn("Cannot discover ports of {}: {}", deviceId(), e.getMessage());
            return List.of();
        }
    }
}
