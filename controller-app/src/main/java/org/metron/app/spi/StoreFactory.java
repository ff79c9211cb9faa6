package org.metron.app.spi;

import org.onlab.util.KryoNamespace;

/**
 * Creates Metron's maps. Inside ONOS each is a {@code ConsistentMap} built by {@code StorageService} with a
 * serializer of the given namespace; the same name must always yield the same map within one cluster.
 */
public interface StoreFactory {

    /**
     * @param name       map name, unique per use ("metron-chains", ...)
     * @param namespace  every type stored in the map is registered here
     */
    <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace);
}
