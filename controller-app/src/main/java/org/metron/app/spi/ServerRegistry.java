package org.metron.app.spi;

import org.metron.drivers.provider.ServerConfigErrors;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The Metron servers the controller may place chains on. Implementations must be thread-safe, must return
 * servers in a stable order (placement draws from this list by index, so tests with a seeded random are
 * reproducible) and must keep each server's {@link org.metron.drivers.agent.AgentClient} open while the server
 * is registered (a client may be unreachable; calls then fail with AgentException).
 */
public interface ServerRegistry {

    /** Registered servers, stable order. */
    Collection<MetronServer> servers();

    /** One server, empty when not registered. */
    Optional<MetronServer> server(DeviceId id);

    /**
     * Server configuration entries the host refused (in ONOS: {@code metron} netcfg entries whose {@code isValid()}
     * said no, as the drivers' {@code ServerConfigErrors} lists them), oldest first; none where servers are not
     * configured through netcfg.
     */
    default List<ServerConfigErrors.Refused> refusedConfigs() {
        return List.of();
    }
}
