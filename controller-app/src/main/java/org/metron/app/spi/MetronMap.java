package org.metron.app.spi;

import org.onosproject.store.service.Versioned;

import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A strongly consistent, versioned key-value map: the subset of ONOS {@code ConsistentMap} Metron uses.
 *
 * <p>Implementations must be linearizable per key, must bump the version on every write, and must persist
 * keys and values only through the {@link org.onlab.util.KryoNamespace} given to {@link StoreFactory}, so a
 * value read back is equal to the value written (the core's own tests check that round trip).
 */
public interface MetronMap<K, V> {

    Optional<Versioned<V>> get(K key);

    /** Inserts when absent; answers whether it inserted. */
    boolean putIfAbsent(K key, V value);

    /** Writes only when the current version is {@code version}; answers whether it wrote. */
    boolean replace(K key, long version, V value);

    /** Unconditional write. */
    void put(K key, V value);

    /** Removes; answers the removed value, empty when absent. */
    Optional<V> remove(K key);

    /** An immutable snapshot of every entry. */
    Map<K, V> snapshot();

    /**
     * Tells {@code changed} the key of every write and removal made after this call, by any instance sharing the
     * map (ONOS: the ConsistentMap's map events), after it is applied. Called on a thread of the map's, maybe
     * with a lock held: a listener reads what it needs later, on a thread of its own, and returns.
     */
    void addListener(Consumer<K> changed);

    /** Undoes {@link #addListener}. */
    void removeListener(Consumer<K> changed);
}
