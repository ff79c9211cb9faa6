package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceAgentEvent;
import org.onosproject.net.device.DeviceAgentListener;
import org.onosproject.net.provider.ProviderId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.concurrent.ConcurrentHashMap;

import static org.slf4j.LoggerFactory.getLogger;

/** gRPC clients to the agents, created lazily and closed on deactivation. */
@Component(immediate = true, service = AgentClientService.class)
public class DefaultAgentClientService implements AgentClientService {

    private final Logger log = getLogger(getClass());
    private final Map<DeviceId, AgentEndpoint> endpoints = new ConcurrentHashMap<>();
    private final Map<DeviceId, GrpcAgentClient> clients = new ConcurrentHashMap<>();
    private final Map<DeviceId, MastershipRole> roles = new ConcurrentHashMap<>();
    private final Map<DeviceId, Map<ProviderId, DeviceAgentListener>> listeners = new ConcurrentHashMap<>();
    private final Map<DeviceId, Consumer<Boolean>> watchers = new ConcurrentHashMap<>();

    @Activate
    protected void activate() {
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() {
        clients.values().forEach(GrpcAgentClient::close);
        clients.clear();
        endpoints.clear();
        roles.clear();
        listeners.clear();
        watchers.clear();
        log.info("Stopped");
    }

    @Override
    public AgentClient client(DeviceId device) {
        Objects.requireNonNull(device, "device");
        return grpcClient(device);
    }

    private GrpcAgentClient grpcClient(DeviceId device) {
        return clients.computeIfAbsent(device, d -> {
            GrpcAgentClient c = GrpcAgentClient.connect(endpoints.computeIfAbsent(d, MetronDeviceIds::endpoint));
            // looked up on each change, so a watcher set after the client was made is told too
            c.onConnectivityChange(ready -> watchers.getOrDefault(d, r -> { }).accept(ready));
            return c;
        });
    }

    @Override
    public CompletableFuture<Boolean> ping(DeviceId device) {
        Objects.requireNonNull(device, "device");
        return grpcClient(device).ping();
    }

    @Override
    public void watchConnectivity(DeviceId device, Consumer<Boolean> onChange) {
        Objects.requireNonNull(device, "device");
        if (onChange == null) {
            watchers.remove(device);
        } else {
            watchers.put(device, onChange);
        }
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
        roles.remove(device);
        GrpcAgentClient c = clients.remove(device);
        if (c != null) {
            c.close();
        }
    }

    @Override
    public boolean hasClient(DeviceId device) {
        return clients.containsKey(device);
    }

    @Override
    public boolean isReady(DeviceId device) {
        GrpcAgentClient c = clients.get(device);
        return c != null && c.isReady();
    }

    @Override
    public MastershipRole role(DeviceId device) {
        return roles.getOrDefault(device, MastershipRole.NONE);
    }

    @Override
    public void setRole(DeviceId device, MastershipRole role) {
        Objects.requireNonNull(role, "role");
        roles.put(device, role);
        DeviceAgentEvent.Type type = role == MastershipRole.MASTER ? DeviceAgentEvent.Type.ROLE_MASTER
                : role == MastershipRole.STANDBY ? DeviceAgentEvent.Type.ROLE_STANDBY : DeviceAgentEvent.Type.ROLE_NONE;
        DeviceAgentEvent event = new DeviceAgentEvent(type, device);
        listeners.getOrDefault(device, Map.of()).values().forEach(l -> l.event(event));
    }

    @Override
    public void addListener(DeviceId device, ProviderId provider, DeviceAgentListener listener) {
        listeners.computeIfAbsent(device, d -> new ConcurrentHashMap<>()).put(provider, listener);
    }

    @Override
    public void removeListener(DeviceId device, ProviderId provider) {
        listeners.getOrDefault(device, new ConcurrentHashMap<>()).remove(provider);
    }
}
