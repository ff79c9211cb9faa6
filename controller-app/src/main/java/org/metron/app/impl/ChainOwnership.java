package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Makes the owner of each chain finish what the operator asked of it, whoever received the request and whichever
 * instance started the work. It follows the chains map's events ({@link MetronMap#addListener}): a chain written by
 * any instance is run for ({@link Leadership#join}) and, when this instance owns it and it is not settled (between
 * SUBMITTED and ACTIVE, REMOVING, DEGRADED), handed to {@code reconcile} at once; a chain removed is no longer run
 * for. A chain this instance comes to own (its owner stopped) is handed over at once too. A slow sweep over a
 * snapshot of the map ({@link #SWEEP_MS}) finds what events can miss (a listener added after a write, an event
 * lost with a node). A chain left in the same unsettled state by a try (its agent is dead, say) is tried again
 * after a delay that doubles from {@link #FIRST_RETRY_MS} up to {@link #MAX_BACKOFF_MS}: a dead device costs a call
 * now and then, not one per write of the chain. A settled chain whose owner still has something of another owner's
 * to take back ({@code leftOver}: a failover move an owner that stopped readied, {@link FailoverPreparation}) is
 * handed to {@code reconcile} by the sweeps the same way, until nothing of it is left.
 * Both hosts run it: in the embedded host, whose one instance owns everything, its first sweep picks up what the
 * previous run of the host left unfinished.
 */
public final class ChainOwnership implements AutoCloseable {
    /** Default time between two safety sweeps; map events bring a chain to its owner within milliseconds. */
    public static final int SWEEP_MS = 10_000;
    /** The first delay before a chain left unsettled is tried again. */
    static final long FIRST_RETRY_MS = 1000;
    static final long MAX_BACKOFF_MS = 30_000;
    /** How long {@link #close} waits for a running reconcile (its agent calls time out well before). */
    static final long CLOSE_WAIT_MS = 60_000;
    private static final Logger log = LoggerFactory.getLogger(ChainOwnership.class);

    private final MetronMap<ChainId, Chain> chains;
    private final Leadership leadership;
    private final Consumer<ChainId> reconcile;
    private final Supplier<Set<ChainId>> leftOver;
    private final LongSupplier clock;
    private final Set<ChainId> joined = ConcurrentHashMap.newKeySet();
    /** Per unsettled chain: the state it was left in (ordinal), when to try again and the delay after that. */
    private final Map<ChainId, long[]> retries = new ConcurrentHashMap<>();
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "metron-ownership");
        t.setDaemon(true);
        return t;
    });
    private final Consumer<ChainId> gained = id -> {
        forgetOnGain(id);
        worker.execute(() -> takeOver(id));
    };
    private final Consumer<ChainId> changed = id -> worker.execute(() -> changed(id));
    /** Settled chains the owner still has work for ({@link #rearming}); none by default. */
    private volatile java.util.function.Predicate<ChainId> unarmed = id -> false;
    /** What this instance forgets of a chain it gains ({@link #rearming}); nothing by default. */
    private volatile Consumer<ChainId> forget = id -> { };
    private volatile boolean started;
    private long firstRetryMs = FIRST_RETRY_MS;

    /**
     * @param reconcile brings one chain this instance owns to what its stored state asks (idempotent)
     * @param clock     milliseconds, for the retry delays
     */
    public ChainOwnership(MetronMap<ChainId, Chain> chains, Leadership leadership, Consumer<ChainId> reconcile,
                          LongSupplier clock) {
        this(chains, leadership, reconcile, Set::of, clock);
    }

    /**
     * @param leftOver the chains with something of another owner's left for their owner to take back (read once a
     *                 sweep): {@link ChainManager#leftFailoverMoves}
     */
    public ChainOwnership(MetronMap<ChainId, Chain> chains, Leadership leadership, Consumer<ChainId> reconcile,
                          Supplier<Set<ChainId>> leftOver, LongSupplier clock) {
        this.chains = Objects.requireNonNull(chains);
        this.leadership = Objects.requireNonNull(leadership);
        this.reconcile = Objects.requireNonNull(reconcile);
        this.leftOver = Objects.requireNonNull(leftOver);
        this.clock = Objects.requireNonNull(clock);
    }

    /**
     * Also hands to reconcile the settled chains {@code unarmed} names: chains whose failover backups (and
     * fast-failover groups) this instance has not computed since it started or took them over. Its first sweep then
     * re-arms every chain it owns, whether or not the cluster told it of a gain (an instance that restarts inside a
     * running cluster may find itself leading already).
     *
     * @param forget called with each chain this instance gains, on the gain's thread before anything else runs
     *               for it: what it kept of the chain from an earlier time it owned it is forgotten there, so that
     *               the chain is unarmed at this gain too ({@link ChainManager#gained})
     */
    public ChainOwnership rearming(java.util.function.Predicate<ChainId> unarmed, Consumer<ChainId> forget) {
        this.unarmed = Objects.requireNonNull(unarmed);
        this.forget = Objects.requireNonNull(forget);
        return this;
    }

    private void forgetOnGain(ChainId id) {
        try {
            forget.accept(id);
        } catch (RuntimeException e) {
            log.warn("Chain {}: forgetting what was kept of it failed: {}", id, e.toString());
        }
    }

    /** Follows the map's events and sweeps every {@code sweep}, the first sweep at once. */
    public ChainOwnership start(Duration sweep) {
        firstRetryMs = Math.min(sweep.toMillis(), FIRST_RETRY_MS);
        started = true;
        leadership.addListener(gained);
        chains.addListener(changed);
        worker.scheduleWithFixedDelay(this::round, 0, sweep.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /** One sweep over every stored chain (tests call it directly). */
    public void round() {
        try {
            Map<ChainId, Chain> now = chains.snapshot();
            for (ChainId id : now.keySet()) {
                joined.add(id);
                leadership.join(id); // again each sweep: a candidacy can be lost with a cluster session
            }
            for (ChainId id : Set.copyOf(joined)) {
                if (!now.containsKey(id)) {
                    forget(id);
                }
            }
            long t = clock.getAsLong();
            Set<ChainId> left = leftOver.get();
            now.values().forEach(c -> consider(c, t, left.contains(c.id())));
        } catch (RuntimeException e) {
            log.warn("Ownership sweep failed: {}", e.toString()); // the next sweep tries again
        }
    }

    /** A chain was written or removed (by any instance): run for it, reconcile it, or forget it. */
    private void changed(ChainId id) {
        try {
            Optional<Chain> c = chains.get(id).map(Versioned::value);
            if (c.isEmpty()) {
                forget(id);
                return;
            }
            if (joined.add(id)) {
                leadership.join(id);
            }
            // what is left of another owner is asked for only when a retry for it is due (not at every write)
            consider(c.get(), clock.getAsLong(), retries.containsKey(id) && leftOver.get().contains(id));
        } catch (RuntimeException e) {
            log.warn("Chain {}: following its change failed: {}", id, e.toString()); // the sweep tries again
        }
    }

    /** The chain is gone: no longer run for (also when this instance ran for it outside, as a submission does). */
    private void forget(ChainId id) {
        joined.remove(id);
        retries.remove(id);
        leadership.release(id);
    }

    /**
     * Hands {@code c} to reconcile when its owner has work to do ({@code left}: something of another owner's to take
     * back; or, {@link #rearming}, backups this instance has not computed), this instance owns it, and its retry is due.
     */
    private void consider(Chain c, long now, boolean left) {
        if (!needsOwner(c) && !left && !unarmedHere(c.id())) {
            retries.remove(c.id());
        } else if (due(c, now) && leadership.actsFor(c.id())) {
            tryOnce(c.id());
        }
    }

    private boolean unarmedHere(ChainId id) {
        try {
            return unarmed.test(id);
        } catch (RuntimeException e) {
            return false; // the next sweep asks again
        }
    }

    /** Whether the chain's owner still has work to do for it. */
    static boolean needsOwner(Chain c) {
        return c.state().unsettled() || c.updatePending();
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
        Optional<Chain> unsettled = chains.get(id).map(Versioned::value)
                .filter(c -> needsOwner(c) || leftOver.get().contains(id));
        unsettled.ifPresentOrElse(c -> {
            long[] before = retries.get(id);
            long delay = before == null || before[0] != c.state().ordinal() ? firstRetryMs
                    : Math.min(MAX_BACKOFF_MS, 2 * before[2]);
            retries.put(id, new long[] {c.state().ordinal(), clock.getAsLong() + delay, delay});
            if (started) {
                // the retry at its time, not at the next sweep (nor at the chain's next write)
                worker.schedule(() -> changed(id), delay, TimeUnit.MILLISECONDS);
            }
        }, () -> retries.remove(id));
    }

    /**
     * Stops following the map and the leadership. Returns once a reconcile running now has ended (at most {@link
     * #CLOSE_WAIT_MS}): from then on this instance acts for no chain. A closed owner whose reconcile still ran could
     * apply an update recorded meanwhile while the next owner removed the chain, leaving the update's rules behind.
     */
    @Override
    public void close() {
        chains.removeListener(changed);
        leadership.removeListener(gained);
        worker.shutdownNow();
        try {
            if (!worker.awaitTermination(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS)) {
                log.warn("Chain ownership closed with a reconcile still running after {} ms", CLOSE_WAIT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
