package org.metron.app.impl;

import org.metron.app.api.ChainId;

/**
 * This instance's moves of the chains it owns: the make-before-break move a drain asks for ({@link ChainMoves}),
 * and taking back the failover move readied for a chain that an operation of the chain's own supersedes.
 * Implemented by {@link ChainManager}; the ONOS component offers it to scaling.
 */
public interface OwnedChainMoves extends ChainMoves {
    /**
     * Takes back the failover move readied for {@code chain}, if any (its server's agent answered a Health poll
     * late and was suspected: {@link FailoverPreparation}): the chain's pipeline on the spare, its tags and its
     * record, the cores it held free again. For an operation of the chain that supersedes the move: it changes the
     * placement the move was readied for, and may need the core the move holds. Caller holds the chain's lock and
     * owns the chain.
     *
     * @param why the log's reason
     */
    void dropReadied(ChainId chain, String why);

    /**
     * The cores the failover moves this instance readied hold, reclaimable by an owner operation that needs one (a
     * split or scale-out of another chain): taking one back goes through {@link #dropReadied}.
     */
    ReadiedCores readiedCores();
}
