package org.metron.app.testing;

import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/** A fixed list of servers. */
public final class TestServers implements ServerRegistry {
    private final List<MetronServer> servers = new ArrayList<>();
    private final List<ServerConfigErrors.Refused> refused = new ArrayList<>();

    /** A configuration entry the host refused (ONOS: a server netcfg entry whose isValid() said no). */
    public TestServers refuse(ServerConfigErrors.Refused r) {
        refused.add(r);
        return this;
    }

    @Override
    public List<ServerConfigErrors.Refused> refusedConfigs() {
        return List.copyOf(refused);
    }

    public TestServers add(MetronServer s) {
        servers.add(s);
        return this;
    }

    /** The server is gone (its device unavailable, in ONOS): no longer listed, no longer placeable. */
    public TestServers remove(DeviceId id) {
        servers.removeIf(s -> s.id().equals(id));
        return this;
    }

    @Override
    public Collection<MetronServer> servers() {
        return List.copyOf(servers);
    }

    @Override
    public Optional<MetronServer> server(DeviceId id) {
        return servers.stream().filter(s -> s.id().equals(id)).findFirst();
    }
}
