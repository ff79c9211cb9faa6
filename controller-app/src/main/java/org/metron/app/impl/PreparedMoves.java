package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * This instance's failover moves readied during a lost server's deadline ({@link PreparedMove}), the cores they
 * hold, and the threads they run on. One worker runs, in the order they were asked, each server's preparation
 * and the discarding of what was prepared for a server that is back, so a move never starts before its
 * preparation ended ({@link #settle}). Cores are held here, in this instance only, from the choice until the move
 * records its placement in the store (the same window a make-before-break update has between its choice and its
 * record, here as long as the deadline); tags are claimed in the store at once.
 *
 * <p>Why prepared at all: in an ONOS cluster every store write is a Raft round; the move done after the deadline
 * (choose, release, reserve, state, installed, ...) took 1.3-3.1 s of the 3 s a failover may take in the 3-node
 * Karaf test. Prepared, what is left after the deadline is the switch rules and one round of concurrent writes.
 */
final class PreparedMoves implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PreparedMoves.class);

    private final TagAllocator tags;
    private final Map<ChainId, PreparedMove> moves = new ConcurrentHashMap<>();
    /** Placements chosen and not yet recorded in the store, per chain: their cores are held. */
    private final Map<ChainId, Placement> holding = new ConcurrentHashMap<>();
    /** Servers whose loss is suspected (deadline running, or passed): a server back is no longer in it. */
    private final Set<DeviceId> suspected = ConcurrentHashMap.newKeySet();
    private final Map<DeviceId, CompletableFuture<Void>> lastWork = new ConcurrentHashMap<>();
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> daemon(r, "metron-failover-prepare"));
    /** The move's store writes go at once, each a Raft round in a cluster: one thread per write of a move. */
    private final ExecutorService writers = Executors.newFixedThreadPool(3, r -> daemon(r, "metron-failover-write"));

    PreparedMoves(TagAllocator tags) {
        this.tags = tags;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Runs {@code work} on the worker, after what was asked before for any server. */
    synchronized CompletableFuture<Void> submit(DeviceId server, Runnable work) {
        CompletableFuture<Void> f = CompletableFuture.runAsync(() -> {
            try {
                work.run();
            } catch (RuntimeException e) {
                log.warn("Failover work for {} failed: {}", server, e.toString());
            }
        }, worker);
        lastWork.put(server, f);
        return f;
    }

    /** Waits (at most {@code max}) until what was asked for {@code server} has run: its preparation, say. */
    void settle(DeviceId server, Duration max) {
        CompletableFuture<Void> f = lastWork.get(server);
        if (f == null) {
            return;
        }
        try {
            f.get(max.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("Failover preparation for {} not done in {} ms: the move goes without what it did not ready",
                    server, max.toMillis());
        }
    }

    void suspect(DeviceId server) {
        suspected.add(server);
    }

    /** Whether {@code server}'s loss is still suspected (it did not come back since {@link #suspect}). */
    boolean suspected(DeviceId server) {
        return suspected.contains(server);
    }

    /** {@code server} is back: no longer suspected; its prepared moves are the caller's to discard. */
    List<PreparedMove> cleared(DeviceId server) {
        suspected.remove(server);
        return movesFrom(server);
    }

    List<PreparedMove> movesFrom(DeviceId server) {
        List<PreparedMove> out = new ArrayList<>();
        moves.values().stream().filter(m -> m.from().equals(server)).forEach(out::add);
        return out;
    }

    /** Holds {@code p}'s cores for its chain (called under the store's reservation lock). */
    void hold(Placement p) {
        holding.put(p.chainId(), p);
    }

    /** Cores held on {@code server} by placements chosen and not yet recorded. */
    Set<Integer> heldCores(DeviceId server) {
        Set<Integer> out = new HashSet<>();
        holding.values().stream().filter(p -> p.server().map(server::equals).orElse(false))
                .forEach(p -> out.addAll(p.cores()));
        return out;
    }

    /** Keeps {@code m} until its move or its discard. */
    void keep(PreparedMove m) {
        moves.put(m.id(), m);
    }

    /** The move prepared for {@code id}, taken out (the caller moves the chain or discards it). */
    Optional<PreparedMove> take(ChainId id) {
        return Optional.ofNullable(moves.remove(id));
    }

    /** The cores {@code id}'s chosen placement held are free again to choose (recorded in the store, or gone). */
    void release(ChainId id) {
        holding.remove(id);
    }

    /**
     * Takes back what a prepared move holds: its pipeline and NIC rules on the spare server (removed there), its
     * tags, its cores. The chain is untouched (it was never moved). Caller holds the chain's lock.
     */
    void discard(PreparedMove m, String why) {
        moves.remove(m.id(), m);
        List<String> left = m.start().abandon();
        tags.release(m.id(), m.claimed());
        holding.remove(m.id());
        log.info("Chain {}: its move prepared on {} discarded ({}){}", m.id(), m.to(), why,
                left.isEmpty() ? "" : "; not removed: " + left);
    }

    /**
     * Runs the writes at once and waits for all (a move's records: in a cluster, one Raft round instead of one
     * per write); the first failure is thrown once all have ended.
     */
    void together(List<Runnable> writes) {
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (Runnable w : writes.subList(1, writes.size())) {
            running.add(CompletableFuture.runAsync(w, writers));
        }
        RuntimeException first = null;
        try {
            writes.get(0).run();
        } catch (RuntimeException e) {
            first = e;
        }
        for (CompletableFuture<Void> f : running) {
            try {
                f.join();
            } catch (RuntimeException e) {
                first = first == null ? (RuntimeException) unwrap(e) : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Reads {@code what} on a thread of the writes' (several records read at once, as they are written). */
    <T> CompletableFuture<T> read(java.util.function.Supplier<T> what) {
        return CompletableFuture.supplyAsync(what, writers);
    }

    private static Throwable unwrap(RuntimeException e) {
        return e.getCause() instanceof RuntimeException ? e.getCause() : e;
    }

    @Override
    public void close() {
        worker.shutdownNow();
        writers.shutdownNow();
    }
}
