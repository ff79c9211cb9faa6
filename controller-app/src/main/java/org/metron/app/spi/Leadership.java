package org.metron.app.spi;

import org.metron.app.api.ChainId;

/**
 * Which controller instance acts for a chain: exactly one instance at a time deploys, updates and removes a
 * given chain, so two instances never program the same chain's rules concurrently. A single-instance
 * implementation answers true for everything.
 */
public interface Leadership {

    /**
     * Runs for (or confirms) leadership of the chain's topic and answers whether this instance holds it.
     * Must be idempotent and must not block longer than the implementation's election timeout.
     */
    boolean actsFor(ChainId chain);

    /** Gives up leadership of the chain's topic (the chain was removed). No-op when not leader. */
    void release(ChainId chain);
}
