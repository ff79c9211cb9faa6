package org.metron.embedded.net;

import com.google.common.collect.ImmutableList;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The topology's servers, each with a gRPC client for its agent (the drivers' client; it reconnects on its
 * own, so an agent restart needs nothing here). Servers without an agent address are not registered.
 */
public final class AgentServerRegistry implements ServerRegistry, AutoCloseable {
    private final List<MetronServer> servers;

    public AgentServerRegistry(NetworkFile net) {
        ImmutableList.Builder<MetronServer> b = ImmutableList.builder();
        for (NetworkFile.Server s : net.servers) {
            s.agent.ifPresent(target -> b.add(new MetronServer(s.id, GrpcAgentClient.connect(
                    AgentEndpoint.parse(target)), s.attachments)));
        }
        servers = b.build();
    }

    @Override
    public Collection<MetronServer> servers() {
        return servers;
    }

    @Override
    public Optional<MetronServer> server(DeviceId id) {
        return servers.stream().filter(s -> s.id().equals(id)).findFirst();
    }

    @Override
    public void close() {
        servers.forEach(s -> s.agent().close());
    }
}
