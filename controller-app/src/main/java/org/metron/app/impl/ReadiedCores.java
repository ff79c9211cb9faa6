package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.spi.Leadership;
import org.metron.app.store.ChainStore;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The cores held by the failover moves this instance readied and has not yet made ({@link FailoverPreparation}: a
 * suspected server's chains readied on another server, their pipelines running there until the deadline passes or
 * the server answers) are reclaimable by any owner operation that needs them: a core such a move holds is counted
 * free by the operation that asks, and taking it back drops the move through the one take-back path (the chain
 * manager's {@link OwnedChainMoves#dropReadied}, under the holding chain's lock). A failover that happens later
 * readies again or moves the chain without readiness. At rate on two loaded CPUs the agent watch suspected a serving
 * agent every few seconds, and the move readied for its chain then held the other server's only core: a scale-out,
 * split or deployment of another chain was refused "no free core" (docs/scaling.md#scale-out).
 *
 * <p>Moves of other instances (their records) stay held: only this instance may take back what it readied.
 */
public final class ReadiedCores implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReadiedCores.class);

    private final PreparedMoves moves;
    private final ChainStore store;
    private final Leadership leadership;
    private final BiConsumer<ChainId, String> dropReadied;
    private final Duration wait;
    /**
     * The take-backs run here, each under its holding chain's lock, while the asking operation holds its own chain's
     * lock: one that waits too long (two operations each taking back the other's move) is given up, never a deadlock.
     */
    private final ExecutorService takers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "metron-readied-reclaim");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param dropReadied the chain manager's take-back of a chain's readied move (caller holds the lock, owns it)
     * @param wait        how long an operation waits for a take-back (for the holding chain's lock, the spare's agent)
     */
    ReadiedCores(PreparedMoves moves, ChainStore store, Leadership leadership, BiConsumer<ChainId, String> dropReadied,
                 Duration wait) {
        this.moves = Objects.requireNonNull(moves);
        this.store = Objects.requireNonNull(store);
        this.leadership = Objects.requireNonNull(leadership);
        this.dropReadied = Objects.requireNonNull(dropReadied);
        this.wait = Objects.requireNonNull(wait);
    }

    /** The cores on {@code server} held by moves readied here for chains other than {@code except}: core → chain. */
    public Map<Integer, ChainId> reclaimable(DeviceId server, ChainId except) {
        return moves.readiedOn(server, except);
    }

    /**
     * Takes back the readied moves holding {@code cores} of {@code server} (each through the chain manager's take-back,
     * under its chain's lock, waiting at most the step timeout); caller holds its own chain's lock and not the
     * reservation lock (a readying holds its chain's lock and then takes that one).
     *
     * @param why the operation that needs the cores (the log's reason)
     * @return whether none of {@code cores} is held by a move readied here any more
     */
    public boolean reclaim(DeviceId server, Collection<Integer> cores, String why) {
        Set<ChainId> holders = new TreeSet<>(java.util.Comparator.comparing(ChainId::name));
        Map<Integer, ChainId> held = moves.readiedOn(server, null);
        cores.stream().map(held::get).filter(Objects::nonNull).forEach(holders::add);
        for (ChainId holder : holders) {
            takeBack(holder, "its core on " + server + " is reclaimed: " + why);
        }
        Map<Integer, ChainId> left = moves.readiedOn(server, null);
        boolean freed = cores.stream().noneMatch(left::containsKey);
        if (!holders.isEmpty()) {
            log.info("Cores {} of {} held by the failover moves readied for {}: {} ({})", cores, server, holders,
                    freed ? "taken back" : "not all taken back", why);
        }
        return freed;
    }

    /**
     * After {@code refused} (a placement with {@code engine} found no server with the free cores), whether the moves
     * readied for other chains than {@code chain} were in the way: {@code choose} is run again as a dry run with their
     * cores counted free (after the free ones), and the moves holding the cores it picks are taken back. The caller
     * then places once more. Caller holds the chain's lock and not the reservation lock.
     */
    boolean reclaimFor(ChainId chain, MetronException refused, PlacementEngine engine,
                       Function<PlacementEngine, ServerChoice> choose) {
        if (refused.fault() != Fault.IMPOSSIBLE_PLACEMENT || !moves.readiedAnywhere(chain)) {
            return false;
        }
        ServerChoice dry;
        try {
            dry = choose.apply(engine.reclaiming(s -> moves.readiedOn(s, chain).keySet()));
        } catch (MetronException e) {
            return false; // the readied moves' cores would not do either
        }
        Set<Integer> readied = moves.readiedOn(dry.server().id(), chain).keySet();
        return dry.cores().stream().anyMatch(readied::contains)
                && reclaim(dry.server().id(), dry.cores(), "chain " + chain + " is placed there");
    }

    private void takeBack(ChainId holder, String why) {
        AtomicBoolean wanted = new AtomicBoolean(true);
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            synchronized (store.lockFor(holder)) {
                if (!wanted.get()) {
                    return; // the asking operation gave up: the move stays for its failover
                }
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), holder)) {
                    if (leadership.actsFor(holder)) {
                        dropReadied.accept(holder, why);
                    }
                }
            }
        }, takers);
        try {
            done.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            wanted.set(false);
            log.warn("Chain {}: its readied failover move not taken back within {} ms (its lock or the spare's "
                    + "agent busy): {}", holder, wait.toMillis(), why);
        } catch (InterruptedException e) {
            wanted.set(false);
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("Chain {}: taking back its readied failover move failed ({}): {}", holder, e.toString(), why);
        }
    }

    @Override
    public void close() {
        takers.shutdownNow();
    }
}
