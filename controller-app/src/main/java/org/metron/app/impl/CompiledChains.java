package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.synth.CompiledChain;

/**
 * The compiled form of placed chains, for the parts that run them after deployment (scaling). One cache answers
 * it: the {@link ChainManager}'s, which compiled the chain when it placed it.
 */
public interface CompiledChains {
    /**
     * The chain compiled for the profile it was placed with (compiled again from its stored definition when this
     * instance did not place it).
     *
     * @throws org.metron.app.api.MetronException UNKNOWN_CHAIN for a chain that does not exist
     */
    CompiledChain compiled(ChainId id);

    /**
     * Scaling changed the chain's groups or switch rules (an operation committed): what was precomputed for its
     * rules before, its failover backups, is computed again ({@link ChainManager#refreshBackups}), so a device
     * failing later is still handled by a lookup, with the rules the chain has now.
     */
    void rulesChanged(ChainId id);
}
