package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Makes the owner of each chain finish what the operator asked of it, whoever received the request and whichever
 * instance started the work. Every round it runs for ownership of every stored chain ({@link Leadership#join}),
 * gives it up for chains that are gone, and hands each chain it owns that is not settled (between SUBMITTED and
 * ACTIVE, REMOVING, DEGRADED) to {@code reconcile}; a chain this instance comes to own (its owner stopped) is handed
 * over at once. A chain left in the same unsettled state by a try (its agent is dead, say) is tried again after a
 * delay that doubles from one round up to {@link #MAX_BACKOFF_MS}: a dead device costs a call now and then, not
 * one every round.
 * Both hosts run it: in the embedded host, whose one instance owns everything, its first round picks up what the
 * previous run of the host left unfinished.
 */
public final class ChainOwnership implements AutoCloseable {
    /** Default time between two rounds: a chain submitted on another instance is picked up within about this. */
    public static final int INTERVAL_MS = 1000;
    static final long MAX_BACKOFF_MS = 30_000;
    private static final Logger log = LoggerFactory.getLogger(ChainOwnership.class);

    private final MetronMap<ChainId, Chain> chains;
    private final Leadership leadership;
    private final Consumer<ChainId> reconcile;
    private final LongSupplier clock;
    private final Set<ChainId> joined = ConcurrentHashMap.newKeySet();
    /** Per unsettled chain: the state it was left in (ordinal), when to try again and the delay after that. */
    private final Map<ChainId, long[]> retries = new ConcurrentHashMap<>();
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "metron-ownership");
        t.setDaemon(true);
        return t;
    });
    private final Consumer<ChainId> gained = id -> worker.execute(() -> takeOver(id));
    private long intervalMs = INTERVAL_MS;

    /**
     * @param reconcile brings one chain this instance owns to what its stored state asks (idempotent)
     * @param clock     milliseconds, for the retry delays
     */
    public ChainOwnership(MetronMap<ChainId, Chain> chains, Leadership leadership, Consumer<ChainId> reconcile,
                          LongSupplier clock) {
        this.chains = Objects.requireNonNull(chains);
        this.leadership = Objects.requireNonNull(leadership);
        this.reconcile = Objects.requireNonNull(reconcile);
        this.clock = Objects.requireNonNull(clock);
    }

    /** Starts the rounds, the first at once. */
    public ChainOwnership start(Duration interval) {
        intervalMs = interval.toMillis();
        leadership.addListener(gained);
        worker.scheduleWithFixedDelay(this::round, 0, intervalMs, TimeUnit.MILLISECONDS);
        return this;
    }

    /** One round (tests call it directly). */
    public void round() {
        try {
            Map<ChainId, Chain> now = chains.snapshot();
            for (ChainId id : now.keySet()) {
                if (joined.add(id)) {
                    leadership.join(id);
                }
            }
            for (ChainId id : Set.copyOf(joined)) {
                if (!now.containsKey(id)) {
                    joined.remove(id);
                    retries.remove(id);
                    leadership.release(id);
                }
            }
            long t = clock.getAsLong();
            for (Chain c : now.values()) {
                if (!c.state().unsettled()) {
                    retries.remove(c.id());
                } else if (due(c, t) && leadership.actsFor(c.id())) {
                    tryOnce(c.id());
                }
            }
        } catch (RuntimeException e) {
            log.warn("Ownership round failed: {}", e.toString()); // the next round tries again
        }
    }

    private boolean due(Chain c, long now) {
        long[] r = retries.get(c.id());
        return r == null || r[0] != c.state().ordinal() || now >= r[1];
    }

    /** This instance came to own {@code id}: whatever the chain's state, its owner looks at it now. */
    private void takeOver(ChainId id) {
        retries.remove(id);
        log.info("This instance now owns chain {}", id);
        tryOnce(id);
    }

    private void tryOnce(ChainId id) {
        try {
            reconcile.accept(id);
        } catch (RuntimeException e) {
            log.warn("Chain {}: reconciling failed: {}", id, e.toString());
        }
        chains.get(id).map(v -> v.value()).filter(c -> c.state().unsettled()).ifPresentOrElse(c -> {
            long[] before = retries.get(id);
            long delay = before == null || before[0] != c.state().ordinal() ? intervalMs
                    : Math.min(MAX_BACKOFF_MS, 2 * before[2]);
            retries.put(id, new long[] {c.state().ordinal(), clock.getAsLong() + delay, delay});
        }, () -> retries.remove(id));
    }

    @Override
    public void close() {
        leadership.removeListener(gained);
        worker.shutdownNow();
    }
}
