package org.metron.app.scaling;

import org.metron.agent.v1.ServerResources;
import org.metron.app.spi.MetronServer;
import org.onosproject.net.DeviceId;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Each server's resources (cores, pipelines per core, tags in use) as its agent last reported them, refreshed in
 * the background by the load monitor, so that a split does not wait for a GetResources round trip on its way
 * to the new core. Only a safety net is read from here: which cores and tags Metron's own chains hold is
 * always read from the store at decision time.
 */
final class ResourceCache {
    /** A split uses a cached answer at most this old; otherwise it asks the agent. */
    static final long MAX_AGE_MS = 2000;

    private static final class Entry {
        final long atMs;
        final ServerResources resources;

        Entry(long atMs, ServerResources resources) {
            this.atMs = atMs;
            this.resources = resources;
        }
    }

    private final Map<DeviceId, Entry> entries = new ConcurrentHashMap<>();
    private final LongSupplier clock;

    ResourceCache(LongSupplier clock) {
        this.clock = clock;
    }

    /** Asks the server's agent again, without waiting for the answer. */
    void refresh(MetronServer server) {
        long asked = clock.getAsLong();
        server.agent().getResources().thenAccept(r -> entries.put(server.id(), new Entry(asked, r)));
    }

    /** The server's resources, if an answer younger than {@link #MAX_AGE_MS} is at hand. */
    Optional<ServerResources> fresh(DeviceId server) {
        Entry e = entries.get(server);
        return e != null && clock.getAsLong() - e.atMs <= MAX_AGE_MS ? Optional.of(e.resources) : Optional.empty();
    }
}
