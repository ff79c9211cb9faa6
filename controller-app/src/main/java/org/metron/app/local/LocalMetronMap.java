package org.metron.app.local;

import com.google.common.collect.ImmutableMap;
import org.metron.app.spi.MetronMap;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A single-instance {@link MetronMap}: linearizable by one lock, keys and values kept Kryo-encoded with the
 * map's namespace, exactly as a distributed map would ship them. Every read decodes a fresh copy, so a type
 * missing from the namespace fails on the first write, not in production. For one controller instance (the
 * embedded host) and tests.
 */
public final class LocalMetronMap<K, V> implements MetronMap<K, V> {
    private static final class Entry {
        final byte[] value;
        final long version;

        Entry(byte[] value, long version) {
            this.value = value;
            this.version = version;
        }
    }

    private final KryoNamespace namespace;
    private final Map<KeyBytes, Entry> entries = new HashMap<>();
    private long nextVersion = 1;

    public LocalMetronMap(KryoNamespace namespace) {
        this.namespace = Objects.requireNonNull(namespace);
    }

    /** Encoded key with value equality. */
    private static final class KeyBytes {
        final byte[] bytes;

        KeyBytes(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof KeyBytes && java.util.Arrays.equals(((KeyBytes) o).bytes, bytes);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(bytes);
        }
    }

    private KeyBytes key(K key) {
        return new KeyBytes(namespace.serialize(Objects.requireNonNull(key, "key")));
    }

    @Override
    public synchronized Optional<Versioned<V>> get(K key) {
        Entry e = entries.get(key(key));
        return e == null ? Optional.empty() : Optional.of(new Versioned<>(namespace.deserialize(e.value), e.version));
    }

    @Override
    public synchronized boolean putIfAbsent(K key, V value) {
        KeyBytes k = key(key);
        if (entries.containsKey(k)) {
            return false;
        }
        entries.put(k, new Entry(namespace.serialize(Objects.requireNonNull(value)), nextVersion++));
        return true;
    }

    @Override
    public synchronized boolean replace(K key, long version, V value) {
        KeyBytes k = key(key);
        Entry e = entries.get(k);
        if (e == null || e.version != version) {
            return false;
        }
        entries.put(k, new Entry(namespace.serialize(Objects.requireNonNull(value)), nextVersion++));
        return true;
    }

    @Override
    public synchronized void put(K key, V value) {
        entries.put(key(key), new Entry(namespace.serialize(Objects.requireNonNull(value)), nextVersion++));
    }

    @Override
    public synchronized Optional<V> remove(K key) {
        Entry e = entries.remove(key(key));
        return e == null ? Optional.empty() : Optional.of(namespace.deserialize(e.value));
    }

    @Override
    public synchronized Map<K, V> snapshot() {
        ImmutableMap.Builder<K, V> b = ImmutableMap.builder();
        entries.forEach((k, e) -> b.put(namespace.deserialize(k.bytes), namespace.deserialize(e.value)));
        return b.build();
    }
}
