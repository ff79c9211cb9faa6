package org.metron.app.scaling;

import org.junit.Test;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

public class ChangedSnapshotTest {

    /** A map that counts its whole-map reads (each one Raft commands on ONOS) and tells its listeners of writes. */
    private static final class CountingMap implements MetronMap<String, String> {
        final Map<String, String> entries = new HashMap<>();
        final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
        int reads;
        Runnable duringRead = () -> { };

        @Override
        public Optional<Versioned<String>> get(String key) {
            return Optional.ofNullable(entries.get(key)).map(v -> new Versioned<>(v, 1));
        }

        @Override
        public boolean putIfAbsent(String key, String value) {
            if (entries.containsKey(key)) {
                return false;
            }
            put(key, value);
            return true;
        }

        @Override
        public boolean replace(String key, long version, String value) {
            put(key, value);
            return true;
        }

        @Override
        public void put(String key, String value) {
            entries.put(key, value);
            listeners.forEach(l -> l.accept(key));
        }

        @Override
        public Optional<String> remove(String key) {
            Optional<String> old = Optional.ofNullable(entries.remove(key));
            listeners.forEach(l -> l.accept(key));
            return old;
        }

        @Override
        public Map<String, String> snapshot() {
            reads++;
            Map<String, String> copy = Map.copyOf(entries);
            duringRead.run();
            return copy;
        }

        @Override
        public void addListener(Consumer<String> changed) {
            listeners.add(changed);
        }

        @Override
        public void removeListener(Consumer<String> changed) {
            listeners.remove(changed);
        }
    }

    @Test
    public void readsTheMapOnceUntilItChanges() {
        CountingMap map = new CountingMap();
        map.put("a", "1");
        try (ChangedSnapshot<String, String> seen = new ChangedSnapshot<>(map)) {
            for (int i = 0; i < 20; i++) {
                assertEquals(Map.of("a", "1"), seen.get());
            }
            assertEquals(1, map.reads);
            map.put("b", "2");
            assertEquals(Map.of("a", "1", "b", "2"), seen.get());
            map.remove("a");
            assertEquals(Map.of("b", "2"), seen.get());
            seen.get();
            assertEquals(3, map.reads);
        }
    }

    @Test
    public void aChangeWhileReadingIsReadAgainNextTime() {
        CountingMap map = new CountingMap();
        map.put("a", "1");
        try (ChangedSnapshot<String, String> seen = new ChangedSnapshot<>(map)) {
            // another node's write lands while this read runs: the read may miss it, the next must not
            map.duringRead = () -> {
                map.duringRead = () -> { };
                map.put("b", "2");
            };
            assertEquals(Map.of("a", "1"), seen.get());
            assertEquals(Map.of("a", "1", "b", "2"), seen.get());
            assertEquals(2, map.reads);
        }
    }

    @Test
    public void closingStopsListening() {
        CountingMap map = new CountingMap();
        ChangedSnapshot<String, String> seen = new ChangedSnapshot<>(map);
        seen.close();
        assertTrue(map.listeners.isEmpty());
    }
}
