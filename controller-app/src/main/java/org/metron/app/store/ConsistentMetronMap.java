package org.metron.app.store;

import com.google.common.collect.ImmutableMap;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.MapEventListener;
import org.onosproject.store.service.Versioned;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/** {@link MetronMap} over an ONOS {@link ConsistentMap}: the ONOS implementation and the one tests use. */
public final class ConsistentMetronMap<K, V> implements MetronMap<K, V> {
    private final ConsistentMap<K, V> map;
    private final Map<Consumer<K>, MapEventListener<K, V>> listeners = new ConcurrentHashMap<>();

    public ConsistentMetronMap(ConsistentMap<K, V> map) {
        this.map = Objects.requireNonNull(map);
    }

    @Override
    public Optional<Versioned<V>> get(K key) {
        return Optional.ofNullable(map.get(key));
    }

    @Override
    public boolean putIfAbsent(K key, V value) {
        return map.putIfAbsent(key, value) == null;
    }

    @Override
    public boolean replace(K key, long version, V value) {
        return map.replace(key, version, value);
    }

    @Override
    public void put(K key, V value) {
        map.put(key, value);
    }

    @Override
    public Optional<V> remove(K key) {
        return Optional.ofNullable(Versioned.valueOrNull(map.remove(key)));
    }

    @Override
    public Map<K, V> snapshot() {
        ImmutableMap.Builder<K, V> b = ImmutableMap.builder();
        map.entrySet().forEach(e -> b.put(e.getKey(), e.getValue().value()));
        return b.build();
    }

    @Override
    public void addListener(Consumer<K> changed) {
        MapEventListener<K, V> l = e -> changed.accept(e.key());
        if (listeners.putIfAbsent(changed, l) == null) {
            map.addListener(l);
        }
    }

    @Override
    public void removeListener(Consumer<K> changed) {
        MapEventListener<K, V> l = listeners.remove(changed);
        if (l != null) {
            map.removeListener(l);
        }
    }
}
