package org.metron.app.local;

import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;

import java.util.Optional;
import java.util.function.Consumer;

/**
 * Ownership when there is one controller instance: it owns every chain from the start, so it never gains one
 * (what a restarted instance left unfinished is picked up by {@code ChainOwnership}'s first round).
 */
public final class SingleInstanceLeadership implements Leadership {
    /** How the single instance is named in {@link #owner}. */
    public static final String LOCAL = "local";

    @Override
    public boolean actsFor(ChainId chain) {
        return true;
    }

    @Override
    public void join(ChainId chain) {
    }

    @Override
    public void release(ChainId chain) {
    }

    @Override
    public Optional<String> owner(ChainId chain) {
        return Optional.of(LOCAL);
    }

    @Override
    public void addListener(Consumer<ChainId> gained) {
    }

    @Override
    public void removeListener(Consumer<ChainId> gained) {
    }
}
