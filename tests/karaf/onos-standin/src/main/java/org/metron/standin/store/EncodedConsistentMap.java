package org.metron.standin.store;

import com.google.common.collect.ImmutableSet;
import com.google.common.collect.Maps;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.MapEvent;
import org.onosproject.store.service.MapEventListener;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.Versioned;

import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A ConsistentMap of one instance that, like ONOS's Atomix-backed maps, holds keys and values only in their
 * encoded form (the builder's Serializer: Kryo for Metron's maps), so every write and read goes through the
 * caller's KryoNamespace inside OSGi as it would in ONOS. Versions grow per map; updates are atomic per map;
 * listeners get MapEvents on their executors.
 */
final class EncodedConsistentMap<K, V> extends EncodedMapBase<K, V> {
    private final Map<ByteBuffer, Versioned<byte[]>> entries = new ConcurrentHashMap<>();
    private final AtomicLong versions = new AtomicLong();
    private final Map<MapEventListener<K, V>, Executor> listeners = new ConcurrentHashMap<>();

    EncodedConsistentMap(String name, Serializer serializer) {
        super(name, serializer);
    }

    private ByteBuffer key(K key) {
        return ByteBuffer.wrap(serializer.encode(Objects.requireNonNull(key, "null key")));
    }

    private K decodeKey(ByteBuffer key) {
        return serializer.decode(key.array());
    }

    private Versioned<V> decode(Versioned<byte[]> v) {
        return v == null ? null : new Versioned<>(serializer.decode(v.value()), v.version(), v.creationTime());
    }

    /** Replaces key's entry with value (null removes) when test holds for its current value; notifies listeners. */
    @Override
    protected synchronized Versioned<V> update(K key, Predicate<Versioned<V>> test,
                                               Function<Versioned<V>, V> value) {
        ByteBuffer k = key(key);
        Versioned<V> old = decode(entries.get(k));
        if (!test.test(old)) {
            return old;
        }
        V next = value.apply(old);
        Versioned<V> now = null;
        if (next == null) {
            entries.remove(k);
        } else {
            Versioned<byte[]> stored = new Versioned<>(serializer.encode(next), versions.incrementAndGet());
            entries.put(k, stored);
            now = decode(stored);
        }
        if (old != null || now != null) {
            notify(new MapEvent<>(now == null ? MapEvent.Type.REMOVE : old == null ? MapEvent.Type.INSERT
                    : MapEvent.Type.UPDATE, name, key, now, old));
        }
        return now;
    }

    private void notify(MapEvent<K, V> event) {
        listeners.forEach((l, executor) -> executor.execute(() -> l.event(event)));
    }



    @Override
    public int size() {
        return entries.size();
    }

    @Override
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    @Override
    public boolean containsKey(K key) {
        return entries.containsKey(key(key));
    }


    @Override
    public Versioned<V> get(K key) {
        return decode(entries.get(key(key)));
    }






    @Override
    public Versioned<V> put(K key, V value) {
        Versioned<V> old = get(key);
        putAndGet(key, value);
        return old;
    }

    @Override
    public Versioned<V> putAndGet(K key, V value) {
        Objects.requireNonNull(value, "null value in consistent map " + name);
        return update(key, old -> true, old -> value);
    }

    @Override
    public synchronized Versioned<V> remove(K key) {
        Versioned<V> old = get(key);
        update(key, v -> true, v -> null);
        return old;
    }

    @Override
    public synchronized void clear() {
        keySet().forEach(this::remove);
    }

    @Override
    public Set<K> keySet() {
        return entries.keySet().stream().map(this::decodeKey).collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public Collection<Versioned<V>> values() {
        return entries.values().stream().map(this::decode).collect(Collectors.toList());
    }

    @Override
    public Set<Map.Entry<K, Versioned<V>>> entrySet() {
        return entries.entrySet().stream()
                .map(e -> Maps.immutableEntry(decodeKey(e.getKey()), decode(e.getValue())))
                .collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public synchronized Versioned<V> putIfAbsent(K key, V value) {
        Versioned<V> old = get(key);
        if (old == null) {
            update(key, Objects::isNull, v -> value);
        }
        return old;
    }

    @Override
    public synchronized boolean remove(K key, V value) {
        Versioned<V> old = get(key);
        return old != null && Objects.equals(old.value(), value) && update(key, v -> true, v -> null) == null;
    }

    @Override
    public synchronized boolean remove(K key, long version) {
        Versioned<V> old = get(key);
        return old != null && old.version() == version && update(key, v -> true, v -> null) == null;
    }

    @Override
    public synchronized Versioned<V> replace(K key, V value) {
        Versioned<V> old = get(key);
        if (old != null) {
            update(key, Objects::nonNull, v -> value);
        }
        return old;
    }

    @Override
    public synchronized boolean replace(K key, V oldValue, V newValue) {
        Versioned<V> old = get(key);
        if (old == null || !Objects.equals(old.value(), oldValue)) {
            return false;
        }
        update(key, v -> true, v -> newValue);
        return true;
    }

    @Override
    public synchronized boolean replace(K key, long oldVersion, V newValue) {
        Versioned<V> old = get(key);
        if (old == null || old.version() != oldVersion) {
            return false;
        }
        update(key, v -> true, v -> newValue);
        return true;
    }


    @Override
    public void addListener(MapEventListener<K, V> listener, Executor executor) {
        listeners.put(listener, executor);
    }

    @Override
    public void removeListener(MapEventListener<K, V> listener) {
        listeners.remove(listener);
    }

}
