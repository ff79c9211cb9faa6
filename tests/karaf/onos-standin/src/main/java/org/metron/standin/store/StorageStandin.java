package org.metron.standin.store;

import org.onosproject.store.service.AsyncConsistentMap;
import org.onosproject.store.service.AsyncConsistentMultimap;
import org.onosproject.store.service.AsyncConsistentTreeMap;
import org.onosproject.store.service.AsyncDocumentTree;
import org.onosproject.store.service.AtomicCounterBuilder;
import org.onosproject.store.service.AtomicCounterMapBuilder;
import org.onosproject.store.service.AtomicIdGeneratorBuilder;
import org.onosproject.store.service.AtomicValueBuilder;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.ConsistentMapBuilder;
import org.onosproject.store.service.ConsistentMultimapBuilder;
import org.onosproject.store.service.ConsistentTreeMapBuilder;
import org.onosproject.store.service.DistributedLockBuilder;
import org.onosproject.store.service.DistributedSetBuilder;
import org.onosproject.store.service.DocumentTreeBuilder;
import org.onosproject.store.service.EventuallyConsistentMapBuilder;
import org.onosproject.store.service.LeaderElectorBuilder;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.StorageService;
import org.onosproject.store.service.Topic;
import org.onosproject.store.service.TopicBuilder;
import org.onosproject.store.service.TransactionContextBuilder;
import org.onosproject.store.service.WorkQueue;
import org.onosproject.store.service.WorkQueueBuilder;
import org.metron.standin.cluster.AtomixNode;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * StorageService stand-in (core-primitives/-dist): consistent maps only (what Metron uses), one per name as in
 * ONOS (a second build of the same name gets the same map). One node: {@link EncodedConsistentMap} (in this JVM).
 * In a cluster ({@link AtomixNode} started): {@link AtomixConsistentMap}, an Atomix AtomicMap in the Raft partition
 * group shared by every node, as ONOS's. Every other primitive fails naming itself.
 */
@Component(immediate = true, service = StorageService.class)
public class StorageStandin implements StorageService {
    private final Map<String, ConsistentMap<?, ?>> maps = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    private static UnsupportedOperationException notStoodIn(String what) {
        return new UnsupportedOperationException("ONOS stand-in StorageService: " + what
                                                         + " is not stood in for (only consistent maps are)");
    }

    @Override
    public <K, V> ConsistentMapBuilder<K, V> consistentMapBuilder() {
        return new ConsistentMapBuilder<>() {
            @Override
            @SuppressWarnings("unchecked")
            public ConsistentMap<K, V> build() {
                Serializer s = serializer();
                return (ConsistentMap<K, V>) maps.computeIfAbsent(name(), n -> atomixNode.atomix() == null
                        ? new EncodedConsistentMap<>(n, s)
                        : StorageFailures.adapt(new AtomixConsistentMap<>(n, s, atomixNode.bytesMap(n))));
            }

            @Override
            public AsyncConsistentMap<K, V> buildAsyncMap() {
                throw notStoodIn("AsyncConsistentMap");
            }
        };
    }

    @Override
    public <K, V> EventuallyConsistentMapBuilder<K, V> eventuallyConsistentMapBuilder() {
        throw notStoodIn("EventuallyConsistentMap");
    }

    @Override
    public <V> DocumentTreeBuilder<V> documentTreeBuilder() {
        throw notStoodIn("DocumentTree");
    }

    @Override
    public <V> ConsistentTreeMapBuilder<V> consistentTreeMapBuilder() {
        throw notStoodIn("ConsistentTreeMap");
    }

    @Override
    public <K, V> ConsistentMultimapBuilder<K, V> consistentMultimapBuilder() {
        throw notStoodIn("ConsistentMultimap");
    }

    @Override
    public <K> AtomicCounterMapBuilder<K> atomicCounterMapBuilder() {
        throw notStoodIn("AtomicCounterMap");
    }

    @Override
    public <E> DistributedSetBuilder<E> setBuilder() {
        throw notStoodIn("DistributedSet");
    }

    @Override
    public AtomicCounterBuilder atomicCounterBuilder() {
        throw notStoodIn("AtomicCounter");
    }

    @Override
    public AtomicIdGeneratorBuilder atomicIdGeneratorBuilder() {
        throw notStoodIn("AtomicIdGenerator");
    }

    @Override
    public <V> AtomicValueBuilder<V> atomicValueBuilder() {
        throw notStoodIn("AtomicValue");
    }

    @Override
    public DistributedLockBuilder lockBuilder() {
        throw notStoodIn("DistributedLock");
    }

    @Override
    public LeaderElectorBuilder leaderElectorBuilder() {
        throw notStoodIn("LeaderElector");
    }

    @Override
    public <T> TopicBuilder<T> topicBuilder() {
        throw notStoodIn("Topic");
    }

    @Override
    public <E> WorkQueueBuilder<E> workQueueBuilder() {
        throw notStoodIn("WorkQueue");
    }

    @Override
    public TransactionContextBuilder transactionContextBuilder() {
        throw notStoodIn("TransactionContext");
    }

    @Override
    public <E> WorkQueue<E> getWorkQueue(String name, Serializer serializer) {
        throw notStoodIn("WorkQueue");
    }

    @Override
    public <V> AsyncDocumentTree<V> getDocumentTree(String name, Serializer serializer) {
        throw notStoodIn("DocumentTree");
    }

    @Override
    public <K, V> AsyncConsistentMultimap<K, V> getAsyncSetMultimap(String name, Serializer serializer) {
        throw notStoodIn("ConsistentMultimap");
    }

    @Override
    public <V> AsyncConsistentTreeMap<V> getAsyncTreeMap(String name, Serializer serializer) {
        throw notStoodIn("ConsistentTreeMap");
    }

    @Override
    public <T> Topic<T> getTopic(String name, Serializer serializer) {
        throw notStoodIn("Topic");
    }
}
