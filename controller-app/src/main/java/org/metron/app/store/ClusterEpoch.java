package org.metron.app.store;

import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;

import java.util.function.LongSupplier;

/**
 * When this cluster's store began, written once by the first instance that finds it empty and read by every other:
 * the high part of the ownership terms ONOS's leadership gives Metron ({@link #token}). ONOS's leadership terms
 * start again at 1 with a fresh cluster store (ONOS reinstalled, a new cluster, a wiped Atomix), while the agents
 * keep the newest token they have seen per pipeline for their lifetime (agent.proto owner_token) and refuse an older
 * one: without the epoch, every chain would be refused by the agents that ran it under the previous store (its
 * owner taking the refusal for a lost ownership) until they were restarted. With it, any term of a later store
 * outranks every term of an earlier one, and terms within one store keep their order.
 */
public final class ClusterEpoch {
    static final String MAP = "metron-cluster-epoch";
    private static final String KEY = "started";
    /** Bits of the leadership term in a token; the epoch (seconds) takes the rest, up to the year 2242. */
    static final int TERM_BITS = 30;

    private final long seconds;

    private ClusterEpoch(long seconds) {
        this.seconds = seconds;
    }

    /**
     * The epoch of the cluster store {@code stores} opens: the one recorded there, or {@code nowSeconds} recorded
     * now when there is none (a fresh store).
     */
    public static ClusterEpoch of(StoreFactory stores, LongSupplier nowSeconds) {
        MetronMap<String, Long> map = stores.map(MAP, MetronSerializers.NAMESPACE);
        map.putIfAbsent(KEY, nowSeconds.getAsLong());
        return new ClusterEpoch(map.get(KEY).orElseThrow().value());
    }

    /** The owner token for leadership term {@code term} of this store: epoch first, then the term. */
    public long token(long term) {
        if (term < 0 || term >= 1L << TERM_BITS) {
            throw new IllegalStateException("leadership term " + term + " does not fit the owner token's "
                    + TERM_BITS + " bits");
        }
        return seconds << TERM_BITS | term;
    }

    public long seconds() {
        return seconds;
    }
}
