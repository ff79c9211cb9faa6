package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The failover deadline of both hosts: a server suspected lost (ONOS: its device went unavailable; embedded: its
 * agent stopped answering, {@link AgentWatch}) has its chains readied on other servers at once
 * ({@link ChainManager#serverSuspected}) and moved ({@link ChainManager#serverLost}) as soon as both its deadline has
 * passed and that readying has ended, whichever is later, unless it is back first ({@link #back}: its chains stay,
 * what was readied is taken back, restart recovery restores what its agent lost).
 *
 * <p>The deadline's timer does nothing else: each move runs on a thread of its own. Before, ONOS ran each deadline
 * and its whole move (waiting for the readying, up to twice the step timeout, then the switch rules and store
 * writes) on one thread, and the embedded host on the agent watch's thread between its Health rounds: a second
 * server's deadline waited for the first one's move, and in the embedded host passed only at the next round
 * (FailoverDeadlineTest, with the readying's own delays: a second lost server's chain moved 9.9-10.9 s after the
 * kill, its deadline 2.1-2.3 s; now 1.8-2.7 s, 17-250 ms after the later of its deadline and its readying).
 */
public class ServerFailover implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ServerFailover.class);

    private final ChainManager manager;
    private final Duration deadline;
    private final Predicate<DeviceId> stillLost;
    /** Only starts the moves when their deadlines pass. */
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r,
            "metron-failover-deadline"));
    /** One thread per move: a move waiting for its readying or its store writes holds up no other server's. */
    private final ExecutorService movers = Executors.newCachedThreadPool(r -> daemon(r, "metron-failover-move"));
    /** The suspicion whose deadline runs, or whose move waits or runs, per server. */
    private final Map<DeviceId, Suspicion> suspected = new ConcurrentHashMap<>();

    /**
     * @param deadline  how long a suspected server has to come back before its chains move
     * @param stillLost asked when the deadline has passed and the move is readied: whether the server is still lost
     *                  (ONOS: its device is still unavailable; the embedded host: its agent does not answer Health,
     *                  {@link AgentWatch#answers})
     */
    public ServerFailover(ChainManager manager, Duration deadline, Predicate<DeviceId> stillLost) {
        this.manager = Objects.requireNonNull(manager);
        this.deadline = Objects.requireNonNull(deadline);
        this.stillLost = Objects.requireNonNull(stillLost);
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** {@code server} is suspected lost now. */
    public void suspected(DeviceId server) {
        suspected(server, System.nanoTime());
    }

    /**
     * {@code server} is suspected lost, its outage begun at {@code since} (nanoTime: an agent that stopped answering
     * is suspected a round or two after its first unanswered Health, and its deadline counts from that one). Its
     * chains are readied elsewhere now; a server already suspected keeps its deadline (a second event of the same
     * outage, a device unavailable then removed, does not put the move off).
     */
    public void suspected(DeviceId server, long since) {
        Suspicion s = new Suspicion(server, since);
        if (suspected.putIfAbsent(server, s) != null) {
            return;
        }
        long left = Math.max(0, since + deadline.toNanos() - System.nanoTime());
        log.info("Metron server {} unavailable: its chains move in {} ms unless it comes back", server,
                left / 1_000_000);
        manager.serverSuspected(server); // readied on other servers meanwhile, traffic untouched
        s.timer = timer.schedule(() -> s.move = CompletableFuture.runAsync(() -> move(s), movers), left,
                TimeUnit.NANOSECONDS);
    }

    /**
     * {@code server} answers again: its deadline is called off (a move already under way goes on only if it has
     * started writing, see {@link #moveNow}), and what was readied for its chains is taken back.
     */
    public void back(DeviceId server) {
        Suspicion s = suspected.remove(server);
        if (s != null && s.timer != null) {
            s.timer.cancel(false);
        }
        manager.serverBack(server);
    }

    private void move(Suspicion s) {
        try {
            moveNow(s);
        } finally {
            suspected.remove(s.server, s); // a later outage is a new suspicion, whatever became of this one's move
        }
    }

    private void moveNow(Suspicion s) {
        DeviceId server = s.server;
        long passed = s.msSince();
        log.info("Metron server {} unavailable for {} ms, moving its chains once their moves are readied (the server "
                + "is lost)", server, passed);
        // the move uses what was readied: waited for here, on this move's own thread (ChainManager#serverLost would
        // wait too); only then is the server asked after, so one back meanwhile keeps its chains where they are
        manager.awaitFailoverWork(server);
        if (suspected.get(server) != s) {
            log.info("Metron server {} back {} ms after it went unavailable: its chains stay", server, s.msSince());
            return;
        }
        if (!stillLost.test(server)) {
            log.info("Metron server {} available again within {} ms: its chains stay", server, s.msSince());
            back(server);
            return;
        }
        long readied = s.msSince();
        List<ChainId> moved = manager.serverLost(server);
        log.warn("Metron server {} unavailable for {} ms: chains moved to other servers: {} (deadline passed at {} "
                + "ms, readied at {} ms)", server, s.msSince(), moved, passed, readied);
    }

    /** Waits until the move of {@code server}'s current suspicion has ended, or {@code max} (tests). */
    public void awaitMove(DeviceId server, Duration max) throws Exception {
        long end = System.nanoTime() + max.toNanos();
        Suspicion s = suspected.get(server);
        while (s != null && s.move == null && suspected.get(server) == s && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        if (s != null && s.move != null) {
            s.move.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    /** Calls off the deadlines not yet passed; a move under way finishes (half a move would leave two paths' rules). */
    @Override
    public void close() throws InterruptedException {
        timer.shutdownNow();
        movers.shutdown();
        movers.awaitTermination(deadline.toMillis() + 60_000, TimeUnit.MILLISECONDS);
    }

    private static final class Suspicion {
        final DeviceId server;
        final long since;
        volatile ScheduledFuture<?> timer;
        volatile CompletableFuture<Void> move;

        Suspicion(DeviceId server, long since) {
            this.server = server;
            this.since = since;
        }

        long msSince() {
            return (System.nanoTime() - since) / 1_000_000;
        }
    }
}
