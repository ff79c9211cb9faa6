package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.metron.app.store.PreparedMoveRecord;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
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
 * This instance's failover moves readied during a lost server's deadline ({@link PreparedMove}), their records in
 * the store, and the threads they run on. Each server's preparation and the discarding of what was prepared for it
 * once it is back run in the order they were asked, so a move never starts before its preparation ended
 * ({@link #settle}); different servers' run side by side (one worker for all readied a second lost server's chains
 * only after the first's: in FailoverDeadlineTest, with the first chain's lock held 3.5 s, the second server's chain
 * was readied 9.9-10.7 s after the kill, its deadline 2.1-2.3 s). A move is recorded in the store
 * ({@link PreparedMoveRecord}) when its server is chosen and before the spare's agent is asked for anything, and the
 * record stays until the move records the chain's placement or is taken back: its cores are held for every
 * instance's placement from the choice on (the
 * same window a make-before-break update has between its choice and its record, here as long as the deadline), and
 * an instance that comes to own the chain without holding the move (its owner stopped during the deadline) finds
 * what to take back. Tags are claimed in the store at the choice too.
 *
 * <p>Why prepared at all: in an ONOS cluster every store write is a Raft round; the move done after the deadline
 * (choose, release, reserve, state, installed, ...) took 1.3-3.1 s of the 3 s a failover may take in the 3-node
 * Karaf test. Prepared, what is left after the deadline is the switch rules and one round of concurrent writes.
 */
final class PreparedMoves implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PreparedMoves.class);

    private final MetronMap<ChainId, PreparedMoveRecord> records;
    private final Map<ChainId, PreparedMove> moves = new ConcurrentHashMap<>();
    /** The chains whose recorded move this instance wrote and still holds (being readied, or readied). */
    private final Set<ChainId> mine = ConcurrentHashMap.newKeySet();
    /** Servers whose loss is suspected (deadline running, or passed): a server back is no longer in it. */
    private final Set<DeviceId> suspected = ConcurrentHashMap.newKeySet();
    private final Map<DeviceId, CompletableFuture<Void>> lastWork = new ConcurrentHashMap<>();
    /** Runs the servers' work, each server's in turn ({@link #submit}). */
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> daemon(r, "metron-failover-prepare"));
    /** The move's store writes go at once, each a Raft round in a cluster: one thread per write of a move. */
    private final ExecutorService writers = Executors.newFixedThreadPool(3, r -> daemon(r, "metron-failover-write"));

    PreparedMoves(MetronMap<ChainId, PreparedMoveRecord> records) {
        this.records = records;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Runs {@code work} once what was asked before for {@code server} has run; other servers' is not waited for. */
    synchronized CompletableFuture<Void> submit(DeviceId server, Runnable work) {
        CompletableFuture<Void> before = lastWork.getOrDefault(server, CompletableFuture.completedFuture(null));
        CompletableFuture<Void> f = before.handle((x, e) -> null).thenRunAsync(() -> {
            try {
                work.run();
            } catch (RuntimeException e) {
                log.warn("Failover work for {} failed: {}", server, e.toString());
            }
        }, workers);
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

    /**
     * Records a move chosen for its chain (called under the store's reservation lock, before the spare's agent is
     * asked for anything): from now on its cores are held for every instance.
     */
    void hold(PreparedMoveRecord r) {
        mine.add(r.chainId());
        records.put(r.chainId(), r);
    }

    /** The move recorded for {@code id}, by this instance or another. */
    Optional<PreparedMoveRecord> recorded(ChainId id) {
        return records.get(id).map(Versioned::value);
    }

    /** The chains whose recorded move this instance does not hold (another owner's, or one left by a stopped owner). */
    Set<ChainId> notHeld() {
        Set<ChainId> out = new HashSet<>(records.snapshot().keySet());
        out.removeAll(mine);
        return out;
    }

    /** Cores held on {@code server} by the moves recorded there (by any instance) and not yet made or taken back. */
    Set<Integer> heldCores(DeviceId server, ChainId except) {
        Set<Integer> out = new HashSet<>();
        records.snapshot().values().stream().filter(r -> r.to().equals(server) && !r.chainId().equals(except))
                .forEach(r -> out.addAll(r.placement().cores()));
        return out;
    }

    /**
     * The cores on {@code server} held by the moves readied here (kept, not yet made or taken back) for chains other
     * than {@code except} (null: all): core → chain ({@link ReadiedCores}).
     */
    Map<Integer, ChainId> readiedOn(DeviceId server, ChainId except) {
        Map<Integer, ChainId> out = new java.util.HashMap<>();
        moves.values().stream().filter(m -> m.to().equals(server) && !m.id().equals(except))
                .forEach(m -> m.placement().cores().forEach(c -> out.put(c, m.id())));
        return out;
    }

    /** Whether a move is readied here for a chain other than {@code except}. */
    boolean readiedAnywhere(ChainId except) {
        return moves.keySet().stream().anyMatch(id -> !id.equals(except));
    }

    /** Keeps {@code m} until its move or its discard. */
    void keep(PreparedMove m) {
        moves.put(m.id(), m);
    }

    /** The move prepared for {@code id}, taken out (the caller moves the chain or discards it). */
    Optional<PreparedMove> take(ChainId id) {
        return Optional.ofNullable(moves.remove(id));
    }

    /** Whether this instance holds a move it recorded for {@code id} (being readied, or readied). */
    boolean holds(ChainId id) {
        return mine.contains(id);
    }

    /** Forgets {@code m} here (its record and what it holds elsewhere are the caller's). */
    void forget(PreparedMove m) {
        moves.remove(m.id(), m);
        mine.remove(m.id());
    }

    /**
     * {@code id}'s recorded move is over (the chain's placement records the move, or what the move held was taken
     * back): its cores are free again to choose.
     */
    void release(ChainId id) {
        records.remove(id);
        mine.remove(id);
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
        workers.shutdownNow();
        writers.shutdownNow();
    }
}
