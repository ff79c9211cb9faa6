package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import io.atomix.core.map.AtomicMap;
import io.atomix.primitive.PrimitiveException;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowId;
import org.onosproject.store.serializers.KryoNamespaces;
import org.onosproject.store.service.Serializer;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The flow tables of the switches and servers (core-dist's DistributedFlowRuleStore, stand-in). One node: in this
 * JVM. In a cluster: one Atomix map ("onos-flow-table") every node reads, keyed by device and flow id, entries
 * Kryo-encoded with ONOS's own API namespace (onos-core-serializers), so every node sees one table per device: a
 * rule installed twice (same device, same flow id) is one entry, a second deployment with other ids shows as more
 * entries. ONOS keeps a device's flow entries with its master; here they are simply shared.
 * <p>
 * Reads do not fail while a storage member is lost. ONOS 2.7's flow store (core-dist's ECFlowRuleStore and its
 * DeviceFlowTable) holds a device's entries on its master and backup nodes and replicates them over cluster
 * messaging: the Atomix storage cluster is not on that path. Here the entries are in an Atomix map. A single
 * operation on it is tried again by its protocol (AtomixNode.protocol()), but a walk over the map's entries is not:
 * the cluster test's storage-member kill saw /onos/v1/flows answer 500, the walk's BlockingIterator timing out in
 * hasNext after the partitions had been leaderless 2.4 and 4.1 s. So a walk that fails is started over until the
 * partitions answer, for at most {@link #WALK_RETRY_MS}.
 */
final class FlowTable {
    private static final long WALK_RETRY_MS = 20_000;
    private static final Serializer SERIALIZER = Serializer.using(KryoNamespaces.API);
    private final Map<DeviceId, Map<FlowId, FlowEntry>> local = new ConcurrentHashMap<>();
    private final AtomicMap<String, byte[]> shared;

    FlowTable(AtomicMap<String, byte[]> shared) {
        this.shared = shared;
    }

    private static String key(DeviceId device, FlowId flow) {
        return device + "|" + Long.toHexString(flow.value());
    }

    private static FlowEntry decode(io.atomix.utils.time.Versioned<byte[]> v) {
        return v == null ? null : SERIALIZER.decode(v.value());
    }

    void put(DeviceId device, FlowEntry entry) {
        if (shared != null) {
            shared.put(key(device, entry.id()), SERIALIZER.encode(entry));
        } else {
            local.computeIfAbsent(device, k -> new ConcurrentHashMap<>()).put(entry.id(), entry);
        }
    }

    /** True if the device had the flow. */
    boolean remove(DeviceId device, FlowId flow) {
        if (shared != null) {
            return shared.remove(key(device, flow)) != null;
        }
        return local.getOrDefault(device, Map.of()).remove(flow) != null;
    }

    /** Stores a batch; in a cluster the writes go out together (pipelined Raft commits), then are waited for. */
    void putAll(DeviceId device, List<FlowEntry> batch) {
        if (shared == null) {
            batch.forEach(e -> put(device, e));
            return;
        }
        CompletableFuture.allOf(batch.stream()
                .map(e -> shared.async().put(key(device, e.id()), SERIALIZER.encode(e)))
                .toArray(CompletableFuture[]::new)).join();
    }

    /** Removes a batch; the flows the device had. */
    Set<FlowId> removeAll(DeviceId device, List<FlowId> flows) {
        if (shared == null) {
            return flows.stream().filter(f -> remove(device, f)).collect(Collectors.toSet());
        }
        Map<FlowId, CompletableFuture<?>> pending = new HashMap<>();
        flows.forEach(f -> pending.put(f, shared.async().remove(key(device, f))));
        CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).join();
        return pending.entrySet().stream().filter(e -> e.getValue().join() != null).map(Map.Entry::getKey)
                .collect(Collectors.toSet());
    }

    /** A walk over the shared map, started over while Atomix fails it (see above); the last failure thrown. */
    private static <T> T walk(Supplier<T> walk) {
        long deadline = System.currentTimeMillis() + WALK_RETRY_MS;
        while (true) {
            try {
                return walk.get();
            } catch (PrimitiveException e) {
                if (System.currentTimeMillis() >= deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException i) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    FlowEntry get(DeviceId device, FlowId flow) {
        return shared != null ? decode(shared.get(key(device, flow)))
                : local.getOrDefault(device, Map.of()).get(flow);
    }

    Collection<FlowEntry> of(DeviceId device) {
        if (shared != null) {
            String prefix = device + "|";
            return walk(() -> {
                ImmutableList.Builder<FlowEntry> b = ImmutableList.builder();
                shared.entrySet().forEach(e -> {
                    if (e.getKey().startsWith(prefix)) {
                        b.add(decode(e.getValue()));
                    }
                });
                return b.build();
            });
        }
        return ImmutableList.copyOf(local.getOrDefault(device, Map.of()).values());
    }

    Collection<FlowEntry> all() {
        if (shared != null) {
            return walk(() -> {
                ImmutableList.Builder<FlowEntry> b = ImmutableList.builder();
                shared.values().forEach(v -> b.add(decode(v)));
                return b.build();
            });
        }
        return local.values().stream().flatMap(t -> t.values().stream()).collect(ImmutableList.toImmutableList());
    }

    void purge(DeviceId device) {
        if (shared != null) {
            String prefix = device + "|";
            walk(() -> shared.keySet().stream().filter(k -> k.startsWith(prefix)).collect(Collectors.toList()))
                    .forEach(shared::remove);
        } else {
            local.remove(device);
        }
    }
}
