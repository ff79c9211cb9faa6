package org.metron.standin.store;

import com.google.common.collect.ImmutableMap;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.DistributedPrimitive;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.Versioned;

import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * What both stand-in ConsistentMaps (one node's {@link EncodedConsistentMap}, the cluster's
 * {@link AtomixConsistentMap}) derive the same way from their own {@code get} and atomic {@link #update}: the
 * compute family, defaults, iteration and the Java map view. Keys and values are held only encoded with
 * {@link #serializer}, as ONOS's maps hold them.
 */
abstract class EncodedMapBase<K, V> implements ConsistentMap<K, V> {
    protected final String name;
    protected final Serializer serializer;

    EncodedMapBase(String name, Serializer serializer) {
        this.name = Objects.requireNonNull(name, "a consistent map needs a name");
        this.serializer = Objects.requireNonNull(serializer, "consistent map " + name + " needs a serializer");
    }

    /** Replaces key's entry with value (null removes) when test holds for its current value, atomically. */
    protected abstract Versioned<V> update(K key, Predicate<Versioned<V>> test, Function<Versioned<V>, V> value);

    @Override
    public String name() {
        return name;
    }

    @Override
    public DistributedPrimitive.Type primitiveType() {
        return DistributedPrimitive.Type.CONSISTENT_MAP;
    }

    @Override
    public boolean containsValue(V value) {
        return values().stream().anyMatch(v -> Objects.equals(v.value(), value));
    }

    @Override
    public Versioned<V> getOrDefault(K key, V defaultValue) {
        Versioned<V> v = get(key);
        return v != null ? v : new Versioned<>(defaultValue, 0);
    }

    @Override
    public Versioned<V> computeIfAbsent(K key, Function<? super K, ? extends V> f) {
        Versioned<V> existing = get(key);
        return existing != null ? existing : update(key, Objects::isNull, old -> f.apply(key));
    }

    @Override
    public Versioned<V> compute(K key, BiFunction<? super K, ? super V, ? extends V> f) {
        return computeIf(key, v -> true, f);
    }

    @Override
    public Versioned<V> computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> f) {
        return computeIf(key, Objects::nonNull, f);
    }

    @Override
    public Versioned<V> computeIf(K key, Predicate<? super V> condition,
                                  BiFunction<? super K, ? super V, ? extends V> f) {
        return update(key, old -> condition.test(Versioned.valueOrNull(old)),
                      old -> f.apply(key, Versioned.valueOrNull(old)));
    }

    @Override
    public Iterator<Map.Entry<K, Versioned<V>>> iterator() {
        return entrySet().iterator();
    }

    @Override
    public Map<K, V> asJavaMap() {
        ImmutableMap.Builder<K, V> b = ImmutableMap.builder();
        entrySet().forEach(e -> b.put(e.getKey(), e.getValue().value()));
        return b.build();
    }
}
