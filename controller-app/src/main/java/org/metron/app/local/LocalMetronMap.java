package org.metron.app.local;

import com.google.common.collect.ImmutableMap;
import org.metron.app.spi.MetronMap;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

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

    /**
     * Told of every change before it is applied, with the map's lock held, in the encoded form the map keeps:
     * a durable copy (the embedded host's store) writes these bytes as they are instead of encoding the value
     * again. A listener that throws vetoes the change (the map stays as it was).
     */
    public interface WriteListener {
        /**
         * @param key   the encoded key
         * @param value the encoded new value; null when the key was removed
         */
        void written(byte[] key, byte[] value);
    }

    private static final WriteListener NONE = (k, v) -> { };

    private final KryoNamespace namespace;
    private final WriteListener listener;
    private final Map<KeyBytes, Entry> entries = new HashMap<>();
    private final java.util.List<Consumer<K>> changeListeners = new CopyOnWriteArrayList<>();
    private long nextVersion = 1;

    public LocalMetronMap(KryoNamespace namespace) {
        this(namespace, NONE);
    }

    public LocalMetronMap(KryoNamespace namespace, WriteListener listener) {
        this.namespace = Objects.requireNonNull(namespace);
        this.listener = Objects.requireNonNull(listener);
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
        store(k, value);
        return true;
    }

    @Override
    public synchronized boolean replace(K key, long version, V value) {
        KeyBytes k = key(key);
        Entry e = entries.get(k);
        if (e == null || e.version != version) {
            return false;
        }
        store(k, value);
        return true;
    }

    @Override
    public synchronized void put(K key, V value) {
        store(key(key), value);
    }

    private void store(KeyBytes k, V value) {
        byte[] bytes = namespace.serialize(Objects.requireNonNull(value));
        listener.written(k.bytes, bytes);
        entries.put(k, new Entry(bytes, nextVersion++));
        changed(k);
    }

    /** Tells the change listeners, in the order of the writes (the lock is held). */
    private void changed(KeyBytes k) {
        if (!changeListeners.isEmpty()) {
            K key = namespace.deserialize(k.bytes);
            changeListeners.forEach(l -> l.accept(key));
        }
    }

    @Override
    public void addListener(Consumer<K> changed) {
        changeListeners.add(Objects.requireNonNull(changed));
    }

    @Override
    public void removeListener(Consumer<K> changed) {
        changeListeners.remove(changed);
    }

    @Override
    public synchronized Optional<V> remove(K key) {
        KeyBytes k = key(key);
        Entry e = entries.get(k);
        if (e == null) {
            return Optional.empty();
        }
        listener.written(k.bytes, null);
        entries.remove(k);
        changed(k);
        return Optional.of(namespace.deserialize(e.value));
    }

    @Override
    public synchronized Map<K, V> snapshot() {
        ImmutableMap.Builder<K, V> b = ImmutableMap.builder();
        entries.forEach((k, e) -> b.put(namespace.deserialize(k.bytes), namespace.deserialize(e.value)));
        return b.build();
    }
}
