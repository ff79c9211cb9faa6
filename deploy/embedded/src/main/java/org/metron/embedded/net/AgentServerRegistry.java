package org.metron.embedded.net;

import com.google.common.collect.ImmutableList;
import org.metron.drivers.provider.ServerConfigErrors;
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
 * own, so an agent restart needs nothing here). Servers without an agent address are not registered. A server
 * whose topology entry has TLS files (or, without, the host's --agent-tls-* files) is reached over mutual TLS.
 */
public final class AgentServerRegistry implements ServerRegistry, AutoCloseable {
    private final List<MetronServer> servers;

    public AgentServerRegistry(NetworkFile net, Optional<AgentTls> defaultTls) {
        ImmutableList.Builder<MetronServer> b = ImmutableList.builder();
        for (NetworkFile.Server s : net.servers) {
            Optional<AgentTls> tls = s.tls.or(() -> defaultTls);
            s.agent.ifPresent(target -> {
                AgentEndpoint plain = AgentEndpoint.parse(target);
                b.add(new MetronServer(s.id, GrpcAgentClient.connect(tls.map(t -> t.apply(plain)).orElse(plain)),
                        s.attachments));
            });
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

    /** None: this host has no netcfg; a bad server entry in the topology file stops the host at start instead. */
    @Override
    public List<ServerConfigErrors.Refused> refusedConfigs() {
        return List.of();
    }

    @Override
    public void close() {
        servers.forEach(s -> s.agent().close());
    }
}
