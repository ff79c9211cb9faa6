package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.DeviceId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import static org.slf4j.LoggerFactory.getLogger;

/** gRPC clients to the agents, created lazily and closed on deactivation. */
@Component(immediate = true, service = AgentClientService.class)
public class DefaultAgentClientService implements AgentClientService {

    private final Logger log = getLogger(getClass());
    private final Map<DeviceId, AgentEndpoint> endpoints = new ConcurrentHashMap<>();
    private final Map<DeviceId, GrpcAgentClient> clients = new ConcurrentHashMap<>();

    @Activate
    protected void activate() {
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() {
        clients.values().forEach(GrpcAgentClient::close);
        clients.clear();
        endpoints.clear();
        log.info("Stopped");
    }

    @Override
    public AgentClient client(DeviceId device) {
        Objects.requireNonNull(device, "device");
        return clients.computeIfAbsent(device, d -> GrpcAgentClient.connect(
                endpoints.computeIfAbsent(d, MetronDeviceIds::endpoint)));
    }

    @Override
    public void setEndpoint(DeviceId device, AgentEndpoint endpoint) {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(endpoint, "endpoint");
        AgentEndpoint old = endpoints.put(device, endpoint);
        if (!endpoint.equals(old)) {
            GrpcAgentClient stale = clients.remove(device);
            if (stale != null) {
                stale.close();
            }
        }
    }

    @Override
    public void remove(DeviceId device) {
        endpoints.remove(device);
        GrpcAgentClient c = clients.remove(device);
        if (c != null) {
            c.close();
        }
    }
}
