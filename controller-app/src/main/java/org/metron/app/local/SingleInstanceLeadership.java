package org.metron.app.local;

import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Ownership when there is one controller instance: it owns every chain (what a restarted instance left unfinished
 * is picked up by {@code ChainOwnership}'s first round). For the chains it runs for it answers as ONOS's
 * leadership does on one node (LeadershipContract holds the two to it): running for a chain gains it, once, and
 * the listeners are told on the joining thread; a chain given up and run for again is gained again.
 * <p>
 * Its term of every chain is the time it was made (ms since the epoch): nobody else owns a chain while it runs, and
 * a later run of the host (a restart, or a second host started against the same agents by mistake) has a larger
 * one, so the agents refuse the earlier run's late requests. The agents keep tokens for their lifetime, so a token
 * that started from 1 in every run would be refused after a restart.
 */
public final class SingleInstanceLeadership implements Leadership {
    /** How the single instance is named in {@link #owner}. */
    public static final String LOCAL = "local";

    private static final Logger log = LoggerFactory.getLogger(SingleInstanceLeadership.class);

    private final long term;
    private final Set<ChainId> joined = ConcurrentHashMap.newKeySet();
    private final List<Consumer<ChainId>> listeners = new CopyOnWriteArrayList<>();

    public SingleInstanceLeadership() {
        this(System.currentTimeMillis());
    }

    /** @param term this instance's term of every chain (tests) */
    public SingleInstanceLeadership(long term) {
        this.term = term;
    }

    @Override
    public boolean actsFor(ChainId chain) {
        return true;
    }

    @Override
    public OptionalLong term(ChainId chain) {
        return OptionalLong.of(term);
    }

    @Override
    public boolean alone() {
        return true;
    }

    @Override
    public void join(ChainId chain) {
        if (!joined.add(chain)) {
            return;
        }
        for (Consumer<ChainId> l : listeners) {
            try {
                l.accept(chain);
            } catch (RuntimeException e) {
                log.warn("Taking over chain {} failed: {}", chain, e.toString()); // as OnosLeadership
            }
        }
    }

    @Override
    public void release(ChainId chain) {
        joined.remove(chain);
    }

    @Override
    public Optional<String> owner(ChainId chain) {
        return Optional.of(LOCAL);
    }

    @Override
    public void addListener(Consumer<ChainId> gained) {
        listeners.add(gained);
    }

    @Override
    public void removeListener(Consumer<ChainId> gained) {
        listeners.remove(gained);
    }
}
