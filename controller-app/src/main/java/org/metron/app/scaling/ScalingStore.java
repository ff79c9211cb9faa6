package org.metron.app.scaling;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.metron.app.store.MetronSerializers;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Scaling's own state, in the same kind of strongly consistent maps as the chains: the journal of operations in
 * progress (one per chain at most), each chain's history of decisions (the newest {@link #HISTORY} kept) and the
 * operator requests waiting for their chains' owners.
 */
public final class ScalingStore {
    public static final String OPERATIONS = "metron-scaling-operations";
    public static final String HISTORY_MAP = "metron-scaling-history";
    public static final String REQUESTS = "metron-scaling-requests";
    /** Entries kept per chain. */
    public static final int HISTORY = 200;

    /**
     * Metron's namespace plus scaling's types, from {@link MetronSerializers#SCALING_FIRST_ID} in this order
     * (append only, like {@link MetronSerializers#NAMESPACE}): the ids b792e96 stored its journal and history with.
     */
    public static final KryoNamespace NAMESPACE = KryoNamespace.newBuilder()
            .register(MetronSerializers.NAMESPACE)
            .nextId(MetronSerializers.SCALING_FIRST_ID)
            .register(ScalingDecision.Kind.class, ScalingOperation.Step.class, ScalingOperation.class,
                    ScalingEvent.Outcome.class, ScalingEvent.class, ScalingRequest.Kind.class, ScalingRequest.class)
            // a drain's move asked of the chain's owner is answered with it
            .register(org.metron.app.api.DrainReport.Move.class)
            .build("metron-scaling");

    private final MetronMap<ChainId, ScalingOperation> operations;
    private final MetronMap<ChainId, List<ScalingEvent>> history;
    private final MetronMap<String, ScalingRequest> requests;

    public ScalingStore(StoreFactory factory) {
        this.operations = factory.map(OPERATIONS, NAMESPACE);
        this.history = factory.map(HISTORY_MAP, NAMESPACE);
        this.requests = factory.map(REQUESTS, NAMESPACE);
    }

    /** Operator requests recorded for their chains' owners ({@link ScalingRequests}), by request id. */
    public MetronMap<String, ScalingRequest> requests() {
        return requests;
    }

    public MetronMap<ChainId, ScalingOperation> operations() {
        return operations;
    }

    /** Appends to a chain's history (compare-and-swap, so concurrent appends are never lost). */
    public void record(ScalingEvent e) {
        while (true) {
            java.util.Optional<Versioned<List<ScalingEvent>>> cur = history.get(e.chain());
            List<ScalingEvent> next = new ArrayList<>(cur.map(Versioned::value).orElse(List.of()));
            next.add(e);
            if (next.size() > HISTORY) {
                next = next.subList(next.size() - HISTORY, next.size());
            }
            List<ScalingEvent> value = ImmutableList.copyOf(next);
            if (cur.isPresent() ? history.replace(e.chain(), cur.get().version(), value)
                    : history.putIfAbsent(e.chain(), value)) {
                return;
            }
        }
    }

    /** A chain's history, oldest first; empty for unknown chains. */
    public List<ScalingEvent> history(ChainId chain) {
        return history.get(chain).map(Versioned::value).orElse(List.of());
    }

    /** Every chain's history. */
    public Map<ChainId, List<ScalingEvent>> allHistory() {
        return history.snapshot();
    }

    /** Operations in progress. */
    public Collection<ScalingOperation> inProgress() {
        return operations.snapshot().values();
    }
}
