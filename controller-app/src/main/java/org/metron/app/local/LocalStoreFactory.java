package org.metron.app.local;

import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.onlab.util.KryoNamespace;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Gives one {@link LocalMetronMap} per name: the same name always yields the same map. */
public final class LocalStoreFactory implements StoreFactory {
    private final Map<String, MetronMap<?, ?>> maps = new ConcurrentHashMap<>();

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace) {
        return (MetronMap<K, V>) maps.computeIfAbsent(name, n -> new LocalMetronMap<K, V>(namespace));
    }
}
