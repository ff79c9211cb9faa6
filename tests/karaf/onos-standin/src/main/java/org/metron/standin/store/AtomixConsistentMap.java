package org.metron.standin.store;

import com.google.common.collect.ImmutableSet;
import com.google.common.collect.Maps;
import io.atomix.core.map.AtomicMap;
import io.atomix.core.map.AtomicMapEventListener;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.MapEvent;
import org.onosproject.store.service.MapEventListener;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.Versioned;

import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A ConsistentMap on an Atomix 3.1.9 AtomicMap in the Raft partition group (what core-primitives'
 * AtomixConsistentMap / DefaultConsistentMap give ONOS): shared by every node of the cluster, keys and values
 * encoded with the caller's Serializer (Kryo for Metron's maps) before they reach Atomix (as Base64 key strings and
 * byte[] values), versions from Atomix, listeners on any node get every node's changes. Conditional updates
 * (compute*, replace, remove by version) are compare-and-set loops on the entry's Atomix version.
 */
final class AtomixConsistentMap<K, V> extends EncodedMapBase<K, V> {
    private final AtomicMap<String, byte[]> map;
    private final Map<MapEventListener<K, V>, AtomicMapEventListener<String, byte[]>> listeners =
            new ConcurrentHashMap<>();

    AtomixConsistentMap(String name, Serializer serializer, AtomicMap<String, byte[]> map) {
        super(name, serializer);
        this.map = map;
    }

    private String key(K key) {
        return Base64.getEncoder().encodeToString(serializer.encode(Objects.requireNonNull(key, "null key")));
    }

    private K decodeKey(String key) {
        return serializer.decode(Base64.getDecoder().decode(key));
    }

    private Versioned<V> decode(io.atomix.utils.time.Versioned<byte[]> v) {
        return v == null || v.value() == null ? null
                : new Versioned<>(serializer.decode(v.value()), v.version(), v.creationTime());
    }

    /** Replaces key's entry with value (null removes) when test holds for its current value (a CAS loop). */
    @Override
    protected Versioned<V> update(K key, Predicate<Versioned<V>> test, Function<Versioned<V>, V> value) {
        String k = key(key);
        while (true) {
            io.atomix.utils.time.Versioned<byte[]> cur = map.get(k);
            Versioned<V> old = decode(cur);
            if (!test.test(old)) {
                return old;
            }
            V next = value.apply(old);
            if (next == null) {
                if (cur == null || map.remove(k, cur.version())) {
                    return null;
                }
            } else if (cur == null) {
                if (map.putIfAbsent(k, serializer.encode(next)) == null) {
                    return decode(map.get(k));
                }
            } else if (map.replace(k, cur.version(), serializer.encode(next))) {
                return decode(map.get(k));
            }
        }
    }



    @Override
    public int size() {
        return map.size();
    }

    @Override
    public boolean isEmpty() {
        return map.isEmpty();
    }

    @Override
    public boolean containsKey(K key) {
        return map.containsKey(key(key));
    }


    @Override
    public Versioned<V> get(K key) {
        return decode(map.get(key(key)));
    }






    @Override
    public Versioned<V> put(K key, V value) {
        Objects.requireNonNull(value, "null value in consistent map " + name);
        return decode(map.put(key(key), serializer.encode(value)));
    }

    @Override
    public Versioned<V> putAndGet(K key, V value) {
        Objects.requireNonNull(value, "null value in consistent map " + name);
        return decode(map.putAndGet(key(key), serializer.encode(value)));
    }

    @Override
    public Versioned<V> remove(K key) {
        return decode(map.remove(key(key)));
    }

    @Override
    public void clear() {
        map.clear();
    }

    @Override
    public Set<K> keySet() {
        return map.keySet().stream().map(this::decodeKey).collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public Collection<Versioned<V>> values() {
        return map.values().stream().map(this::decode).filter(Objects::nonNull).collect(Collectors.toList());
    }

    @Override
    public Set<Map.Entry<K, Versioned<V>>> entrySet() {
        return map.entrySet().stream()
                .map(e -> Maps.immutableEntry(decodeKey(e.getKey()), decode(e.getValue())))
                .filter(e -> e.getValue() != null)
                .collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public Versioned<V> putIfAbsent(K key, V value) {
        Objects.requireNonNull(value, "null value in consistent map " + name);
        return decode(map.putIfAbsent(key(key), serializer.encode(value)));
    }

    @Override
    public boolean remove(K key, V value) {
        String k = key(key);
        io.atomix.utils.time.Versioned<byte[]> cur = map.get(k);
        Versioned<V> old = decode(cur);
        return old != null && Objects.equals(old.value(), value) && map.remove(k, cur.version());
    }

    @Override
    public boolean remove(K key, long version) {
        return map.remove(key(key), version);
    }

    @Override
    public Versioned<V> replace(K key, V value) {
        return decode(map.replace(key(key), serializer.encode(value)));
    }

    @Override
    public boolean replace(K key, V oldValue, V newValue) {
        String k = key(key);
        io.atomix.utils.time.Versioned<byte[]> cur = map.get(k);
        Versioned<V> old = decode(cur);
        return old != null && Objects.equals(old.value(), oldValue)
                && map.replace(k, cur.version(), serializer.encode(newValue));
    }

    @Override
    public boolean replace(K key, long oldVersion, V newValue) {
        return map.replace(key(key), oldVersion, serializer.encode(newValue));
    }


    @Override
    public void addListener(MapEventListener<K, V> listener, Executor executor) {
        AtomicMapEventListener<String, byte[]> l = e -> {
            MapEvent.Type type = MapEvent.Type.valueOf(e.type().name());
            MapEvent<K, V> event = new MapEvent<>(type, name, decodeKey(e.key()), decode(e.newValue()),
                                                  decode(e.oldValue()));
            executor.execute(() -> listener.event(event));
        };
        if (listeners.putIfAbsent(listener, l) == null) {
            map.addListener(l);
        }
    }

    @Override
    public void removeListener(MapEventListener<K, V> listener) {
        AtomicMapEventListener<String, byte[]> l = listeners.remove(listener);
        if (l != null) {
            map.removeListener(l);
        }
    }

}
