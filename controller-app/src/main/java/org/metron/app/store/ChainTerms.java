package org.metron.app.store;

import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The newest ownership term that began an operation of each chain, kept in the cluster store: the store's side of
 * the fencing the agents do with {@code owner_token} (docs/contracts.md#chain-ownership). An instance that lost a
 * chain without knowing it (a GC pause, a partition it has not noticed) still holds its old term in its own view of
 * the leadership, so its own check passes; its chain records and switch rules would then race the new owner's (seen
 * in FencingRealAgentTest: the two instances' records overwrote each other about 1 run in 6, leaving 3 switch rules
 * nobody knew of). The new owner claims its term here before its operation reads or writes anything, and every write
 * an operation issues checks that no newer term has been claimed since: what the deposed instance would write after
 * that is not sent. Terms only go up (a compare-and-set loop), so no instance can lower another's claim.
 */
public final class ChainTerms {
    private final MetronMap<ChainId, Long> terms;
    /**
     * The term this instance last found claimed for each chain (its own claim, or a newer one): the store's value is
     * at least that for good (terms only go up and are never removed), so claiming it again, or an older one, reads
     * nothing. A failover move claims the term its readying claimed during the deadline (a Raft read in a cluster,
     * on the move's path after the deadline, for nothing).
     */
    private final Map<ChainId, Long> claimedAtLeast = new ConcurrentHashMap<>();

    ChainTerms(MetronMap<ChainId, Long> terms) {
        this.terms = Objects.requireNonNull(terms);
    }

    /**
     * Records that an operation of {@code chain} runs with {@code term}, unless a newer term began one already (its
     * writes are then refused by {@link #newest}).
     */
    public void claim(ChainId chain, long term) {
        Long known = claimedAtLeast.get(chain);
        if (known != null && known >= term) {
            return;
        }
        while (true) {
            Optional<Versioned<Long>> now = terms.get(chain);
            if (now.isEmpty()) {
                if (terms.putIfAbsent(chain, term)) {
                    claimedAtLeast.merge(chain, term, Math::max);
                    return;
                }
            } else if (now.get().value() >= term) {
                claimedAtLeast.merge(chain, now.get().value(), Math::max);
                return;
            } else if (terms.replace(chain, now.get().version(), term)) {
                claimedAtLeast.merge(chain, term, Math::max);
                return;
            }
        }
    }

    /** The newest term claimed for {@code chain}, if any. */
    public OptionalLong newest(ChainId chain) {
        return terms.get(chain).map(v -> OptionalLong.of(v.value())).orElse(OptionalLong.empty());
    }
}
