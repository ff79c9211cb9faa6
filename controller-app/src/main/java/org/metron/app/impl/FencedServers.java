package org.metron.app.impl;

import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.provider.ServerConfigErrors;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The server registry as the controller core sees it: each server's agent is a {@link FencedAgent}, so every
 * request that changes a chain's pipeline carries this instance's ownership term of the chain. Both hosts' core
 * (ChainManager, ScalingManager) wrap their registry in it.
 */
public final class FencedServers implements ServerRegistry {
    private final ServerRegistry servers;
    private final Leadership leadership;

    private FencedServers(ServerRegistry servers, Leadership leadership) {
        this.servers = Objects.requireNonNull(servers);
        this.leadership = Objects.requireNonNull(leadership);
    }

    /** {@code servers} fenced by {@code leadership}'s terms (as is when fenced already). */
    public static ServerRegistry of(ServerRegistry servers, Leadership leadership) {
        return servers instanceof FencedServers ? servers : new FencedServers(servers, leadership);
    }

    private MetronServer fenced(MetronServer s) {
        return new MetronServer(s.id(), new FencedAgent(s.agent(), leadership), s.attachments());
    }

    @Override
    public Collection<MetronServer> servers() {
        return servers.servers().stream().map(this::fenced).collect(Collectors.toList());
    }

    @Override
    public Optional<MetronServer> server(DeviceId id) {
        return servers.server(id).map(this::fenced);
    }

    @Override
    public List<ServerConfigErrors.Refused> refusedConfigs() {
        return servers.refusedConfigs();
    }
}
