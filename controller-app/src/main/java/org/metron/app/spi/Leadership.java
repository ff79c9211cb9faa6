package org.metron.app.spi;

import org.metron.app.api.ChainId;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * Which controller instance owns a chain: exactly one instance at a time deploys, updates, scales, recovers and
 * removes a given chain, so two instances never program the same chain's rules concurrently. Every instance runs
 * for every chain it knows of ({@link #join}); when the owner stops, the next candidate owns the chain and is told
 * so ({@link #addListener}), which is how unfinished work is picked up. A single-instance implementation owns
 * everything.
 */
public interface Leadership {

    /**
     * Whether this instance owns the chain now. A read of the current owner (never a cluster write): it is asked
     * on every operation and by the load monitor on every round.
     */
    boolean actsFor(ChainId chain);

    /**
     * Runs for the chain's ownership; idempotent, and cheap when this instance runs for it already (it runs again
     * when its candidacy was lost, say with an expired cluster session). The first instance to run owns the chain.
     */
    void join(ChainId chain);

    /** Gives up running for the chain (it is gone); no-op when not running. */
    void release(ChainId chain);

    /**
     * This instance's ownership term of the chain as it sees it now: a number that grows with every change of the
     * chain's owner (ONOS: the leadership term, {@code Leadership.leader().term()}, under the cluster store's epoch),
     * carried as the fencing token in every agent request that changes the chain's pipeline (agent.proto,
     * owner_token), so an agent refuses a late request of an instance that lost the chain
     * (docs/contracts.md#chain-ownership). Empty when this instance does not own the chain by its own view. A local
     * read, like {@link #actsFor}.
     */
    OptionalLong term(ChainId chain);

    /** The instance that owns the chain, as the cluster names it; empty when nobody runs for it yet. */
    Optional<String> owner(ChainId chain);

    /**
     * Called with each chain this instance comes to own, on an event thread or the thread that joined: a listener
     * hands the work to a thread of its own and returns.
     */
    void addListener(Consumer<ChainId> gained);

    /** Undoes {@link #addListener}. */
    void removeListener(Consumer<ChainId> gained);

    /**
     * Whether this instance is the only one that programs the switches (the embedded host): then a fast-failover
     * group that no rule and no arming of its own names is nobody's and may go at once; in a cluster another
     * instance may be arming it (docs/failover.md#restarts-and-takeovers).
     */
    default boolean alone() {
        return false;
    }
}
