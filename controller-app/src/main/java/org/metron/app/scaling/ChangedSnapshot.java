package org.metron.app.scaling;

import org.metron.app.spi.MetronMap;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A store map's snapshot, read again only after the map changed (its listener counts the changes). The load monitor
 * reads the placements and the scaling journal for every load report, 20 a second per agent on every node; on ONOS
 * each read of a whole ConsistentMap is an Atomix iteration, which Atomix runs as Raft commands (written to every
 * member's log and applied there): in the 3-node cluster test ~450 log entries a second with one chain and nothing
 * happening (1478 of a partition's last 1500 entries were `iterateEntries`), the partition leader's Raft threads
 * using ~0.6 CPU, and a restarted node replaying all of it (tests/karaf/README.md, "A node's restart").
 */
final class ChangedSnapshot<K, V> implements AutoCloseable {
    private final MetronMap<K, V> map;
    private final AtomicLong changes = new AtomicLong();
    private final Consumer<K> listener = k -> changes.incrementAndGet();
    private volatile Read<K, V> last;

    private static final class Read<K, V> {
        final long changes;
        final Map<K, V> entries;

        Read(long changes, Map<K, V> entries) {
            this.changes = changes;
            this.entries = entries;
        }
    }

    ChangedSnapshot(MetronMap<K, V> map) {
        this.map = Objects.requireNonNull(map);
        map.addListener(listener);
    }

    /** The map's entries: the last read when no change came since it began, else a new read. */
    Map<K, V> get() {
        long seen = changes.get();  // before the read: a change during it makes the next get() read again
        Read<K, V> r = last;
        if (r != null && r.changes == seen) {
            return r.entries;
        }
        Map<K, V> entries = map.snapshot();
        last = new Read<>(seen, entries);
        return entries;
    }

    @Override
    public void close() {
        map.removeListener(listener);
    }
}
