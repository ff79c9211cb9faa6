package org.metron.app.store;

import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

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

    ChainTerms(MetronMap<ChainId, Long> terms) {
        this.terms = Objects.requireNonNull(terms);
    }

    /**
     * Records that an operation of {@code chain} runs with {@code term}, unless a newer term began one already.
     *
     * @return the newest term claimed for the chain now: {@code term} when the claim holds, a larger one when it
     *         was refused
     */
    public long claim(ChainId chain, long term) {
        while (true) {
            Optional<Versioned<Long>> now = terms.get(chain);
            if (now.isEmpty()) {
                if (terms.putIfAbsent(chain, term)) {
                    return term;
                }
            } else if (now.get().value() >= term) {
                return now.get().value();
            } else if (terms.replace(chain, now.get().version(), term)) {
                return term;
            }
        }
    }

    /** The newest term claimed for {@code chain}, if any. */
    public OptionalLong newest(ChainId chain) {
        return terms.get(chain).map(v -> OptionalLong.of(v.value())).orElse(OptionalLong.empty());
    }
}
