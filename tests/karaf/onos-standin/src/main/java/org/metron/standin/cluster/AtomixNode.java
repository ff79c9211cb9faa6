package org.metron.standin.cluster;

import io.atomix.cluster.Node;
import io.atomix.cluster.discovery.BootstrapDiscoveryProvider;
import io.atomix.core.Atomix;
import io.atomix.core.AtomixRegistry;
import io.atomix.primitive.PrimitiveType;
import io.atomix.primitive.Recovery;
import io.atomix.core.registry.SimpleRegistry;
import io.atomix.core.counter.AtomicCounter;
import io.atomix.core.election.LeaderElector;
import io.atomix.core.map.AtomicMap;
import io.atomix.protocols.raft.MultiRaftProtocol;
import io.atomix.protocols.raft.MultiRaftProtocolBuilder;
import io.atomix.protocols.raft.partition.RaftPartitionGroup;
import io.atomix.utils.serializer.Namespace;
import io.atomix.utils.serializer.Namespaces;
import io.atomix.utils.serializer.Serializer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Stand-in for core-primitives' AtomixManager with storage nodes (the cluster.json ONOS 2.7 forms a multi-node cluster
 * with): when {@link ClusterConfig} names a cluster, this Karaf node joins the Atomix cluster as a member of its own
 * (type "onos") that holds no partition, found through the storage members (bootstrap discovery of the "storage"
 * list, Atomix's defaults otherwise, as AtomixManager builds it); the Raft partitions its primitives live in are the
 * storage members' (tests/karaf/atomix-storage, ONOS's atomix-agent), so a node that dies takes no Raft server with
 * it. {@link #atomix()} is null for a one-node stand-in. Every primitive is built here, with the settings ONOS's
 * core-primitives builders give it; the electors' Raft sessions expire {@link #SESSION_TIMEOUT} after their node stops
 * answering: that is how a dead node's candidacies and masterships go away.
 */
@Component(immediate = true, service = AtomixNode.class)
public class AtomixNode {
    static final Duration SESSION_TIMEOUT = Duration.ofMillis(Long.getLong("metron.cluster.sessionTimeoutMs", 2500));
    /** ONOS's core-primitives builders try a failed operation again this many times (their MAX_RETRIES). */
    private static final int MAX_RETRIES = 5;
    /**
     * How long a blocking call waits: ONOS's sync primitives' (DistributedPrimitive.DEFAULT_OPERATION_TIMEOUT_MILLIS,
     * 15 s), not Atomix's (5 s).
     */
    static final Duration OPERATION_TIMEOUT =
            Duration.ofMillis(org.onosproject.store.service.DistributedPrimitive.DEFAULT_OPERATION_TIMEOUT_MILLIS);
    private static final long START_TIMEOUT_S = Long.getLong("metron.cluster.startTimeoutS", 240);
    private final Logger log = LoggerFactory.getLogger(getClass());
    private volatile Atomix atomix;

    @Activate
    protected void activate() {
        ClusterConfig cfg = ClusterConfig.get();
        if (cfg == null) {
            return;
        }
        List<String> storage = cfg.storage.stream().map(m -> m.id).collect(Collectors.toList());
        Atomix a = Atomix.builder(registry())
                .withClusterId(cfg.name)
                .withMemberId(cfg.local.id)
                .withAddress(cfg.local.ip, cfg.local.port)
                .withProperty("type", "onos")
                .withMembershipProvider(BootstrapDiscoveryProvider.builder()
                        .withNodes(cfg.storage.stream()
                                .map(m -> Node.builder().withId(m.id).withAddress(m.ip, m.port).build())
                                .collect(Collectors.toList()))
                        .build())
                .withShutdownHookEnabled()
                .build();
        log.info("joining Atomix cluster {} as {} at {}:{} (storage members {})", cfg.name, cfg.local.id,
                 cfg.local.ip, cfg.local.port, storage);
        try {
            a.start().get(START_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            a.stop();
            throw new IllegalStateException("Atomix member " + cfg.local.id + " did not join storage " + storage, e);
        }
        atomix = a;
        log.info("Atomix member {} started: members {}", cfg.local.id, a.getMembershipService().getMembers());
    }

    /** Atomix 3.1.9's primitive types, its internal ones (primary elector, session ids) included. */
    private static final PrimitiveType[] PRIMITIVE_TYPES = {
        io.atomix.primitive.partition.impl.PrimaryElectorType.instance(),
        io.atomix.primitive.session.impl.SessionIdGeneratorType.instance(),
        io.atomix.core.barrier.DistributedCyclicBarrierType.instance(),
        io.atomix.core.collection.DistributedCollectionType.instance(),
        io.atomix.core.counter.AtomicCounterType.instance(),
        io.atomix.core.counter.DistributedCounterType.instance(),
        io.atomix.core.election.LeaderElectionType.instance(),
        io.atomix.core.election.LeaderElectorType.instance(),
        io.atomix.core.idgenerator.AtomicIdGeneratorType.instance(),
        io.atomix.core.list.DistributedListType.instance(),
        io.atomix.core.lock.AtomicLockType.instance(),
        io.atomix.core.lock.DistributedLockType.instance(),
        io.atomix.core.log.DistributedLogType.instance(),
        io.atomix.core.map.AtomicCounterMapType.instance(),
        io.atomix.core.map.AtomicMapType.instance(),
        io.atomix.core.map.AtomicNavigableMapType.instance(),
        io.atomix.core.map.AtomicSortedMapType.instance(),
        io.atomix.core.map.DistributedMapType.instance(),
        io.atomix.core.map.DistributedNavigableMapType.instance(),
        io.atomix.core.map.DistributedSortedMapType.instance(),
        io.atomix.core.multimap.AtomicMultimapType.instance(),
        io.atomix.core.multimap.DistributedMultimapType.instance(),
        io.atomix.core.multiset.DistributedMultisetType.instance(),
        io.atomix.core.queue.DistributedQueueType.instance(),
        io.atomix.core.semaphore.AtomicSemaphoreType.instance(),
        io.atomix.core.semaphore.DistributedSemaphoreType.instance(),
        io.atomix.core.set.DistributedNavigableSetType.instance(),
        io.atomix.core.set.DistributedSetType.instance(),
        io.atomix.core.set.DistributedSortedSetType.instance(),
        io.atomix.core.transaction.TransactionType.instance(),
        io.atomix.core.tree.AtomicDocumentTreeType.instance(),
        io.atomix.core.value.AtomicValueType.instance(),
        io.atomix.core.value.DistributedValueType.instance(),
        io.atomix.core.workqueue.WorkQueueType.instance(),
    };

    /**
     * The types this member uses, named up front: Atomix's default registry scans the class path with classgraph,
     * which under Felix loads the types through a class loader of its own (ClassCastException on
     * HeartbeatMembershipProtocol$Type vs NamedType, measured in this Karaf).
     */
    private static AtomixRegistry registry() {
        SimpleRegistry.Builder b = SimpleRegistry.builder()
                .addPartitionGroupType(RaftPartitionGroup.TYPE)
                .addProtocolType(MultiRaftProtocol.TYPE)
                .addDiscoveryProviderType(BootstrapDiscoveryProvider.TYPE);
        for (PrimitiveType t : PRIMITIVE_TYPES) {
            b.addPrimitiveType(t);
        }
        return b.build();
    }

    @Deactivate
    protected void deactivate() {
        Atomix a = atomix;
        atomix = null;
        if (a != null) {
            try {
                a.stop().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("Atomix stop: {}", e.toString());
            }
        }
    }

    /** The started member, or null for a one-node stand-in. */
    public Atomix atomix() {
        return atomix;
    }

    /**
     * The protocol of the stand-in's maps and counters, as ONOS 2.7's core-primitives builds them
     * (AtomixConsistentMapBuilder, AtomixAtomicCounterBuilder): the "raft" group, a session that recovers when it
     * expires, an operation that fails (no leader, a timeout, a closed connection) tried again up to
     * {@link #MAX_RETRIES} times, Atomix's default session timeout (30 s) and read consistency (sequential: a read
     * is answered by the partition's leader without a quorum round). Before session 30 the stand-in's maps had no
     * retries and 2.5 s sessions: a store partition's new leader elected in 2.5-3 s left their operations failing
     * where ONOS's wait for it.
     */
    static MultiRaftProtocol protocol() {
        return raft().build();
    }

    /**
     * The electors' protocol (AtomixLeaderElectorBuilder): as {@link #protocol()}, the session timeout
     * {@link #SESSION_TIMEOUT} (DistributedLeadershipStore's electionTimeoutMillis), so a node that stops answering
     * loses its candidacies that soon.
     */
    static MultiRaftProtocol electorProtocol() {
        return raft().withMaxTimeout(SESSION_TIMEOUT).build();
    }

    private static MultiRaftProtocolBuilder raft() {
        return MultiRaftProtocol.builder("raft").withRecoveryStrategy(Recovery.RECOVER).withMaxRetries(MAX_RETRIES);
    }

    private static final Serializer BASIC = Serializer.using(Namespace.builder().register(Namespaces.BASIC)
                                                                     .build());

    /** A map of strings to bytes (the stand-in encodes what it stores itself). */
    public AtomicMap<String, byte[]> bytesMap(String name) {
        return atomix.<String, byte[]>atomicMapBuilder(name).withProtocol(protocol()).withSerializer(BASIC).build()
                .async().sync(OPERATION_TIMEOUT);
    }

    /** An atomic counter (ONOS's AtomixAtomicCounterBuilder). */
    public AtomicCounter counter(String name) {
        return atomix.atomicCounterBuilder(name).withProtocol(protocol()).build().async().sync(OPERATION_TIMEOUT);
    }

    /** A leader elector whose candidates are node ids. */
    public LeaderElector<String> elector(String name) {
        return atomix.<String>leaderElectorBuilder(name).withProtocol(electorProtocol()).withSerializer(BASIC).build()
                .async().sync(OPERATION_TIMEOUT);
    }
}
