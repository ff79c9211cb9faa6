package org.metron.app.impl;

import org.metron.agent.v1.HealthReply;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One watcher for all servers: asks each agent's Health every interval and has {@link ServerRecovery} compare
 * the agent with the store when the agent may have lost what it was given: its boot id changed (it restarted),
 * it answers again after failing to (restarted or not, it was out of reach), or it is seen for the first time
 * (it may have restarted while this controller was down). A recovery that fails is retried every interval
 * until it succeeds. Servers whose agent answers with the boot id already checked cost one Health call.
 */
public final class AgentWatch implements AutoCloseable {
    /**
     * Default time between two rounds: a restarted agent is back in service within about this long, and in the
     * embedded host (where this watch is what notices a dead agent) a death is seen within it.
     */
    public static final int INTERVAL_MS = 500;
    /** System property overriding {@link #INTERVAL_MS} in both hosts (ONOS and embedded). */
    public static final String INTERVAL_PROPERTY = "metron.recovery.intervalMs";
    /** System property: how long a server's agent stays unreachable before its chains move (ms), both hosts. */
    public static final String FAILOVER_PROPERTY = "metron.serverFailoverMs";
    /**
     * Default failover deadline, from RealAgentFailoverTimingTest's measurements (real agents, switches stood in):
     * moving a lost server's chain to another server took 41-122 ms (a whole submission in ONOS 2.7 took
     * 230-670 ms); a killed agent started again at once answered after 0.29-0.6 s at best, up to 1.5 s while the
     * shared 2-core machine was busy. With the server's device unavailable within 1 s of its agent's death,
     * 1 s + 1.5 s + the move stays within the 3 s promised; an agent restarted at once is back with about 1 s left
     * to notice its return, so its chains recover in place (a slower restart has them moved instead). The move is
     * readied on another server while the deadline runs ({@link ServerFailover}, {@link FailoverPreparation}), so
     * what follows the deadline is a read of the chain and its placement, one fence read, the switch rules of every
     * device at once and one round of store writes (0.2-0.3 s in the 3-node Karaf test at load 14-28 when the
     * readying was done in time; under load it may end after the deadline, and the move waits for it).
     */
    public static final int FAILOVER_MS = 1500;
    /**
     * Rounds an agent whose connection stays up may leave unanswered before it is suspected ({@link #late}): the
     * second missed round suspects it (a silence of about two Health waits).
     */
    public static final int LATE_ROUNDS = 2;

    private static final Logger log = LoggerFactory.getLogger(AgentWatch.class);

    private final ServerRegistry servers;
    private final ServerRecovery recovery;
    private final Duration timeout;
    private final Map<DeviceId, Long> bootIds = new HashMap<>();
    private final Set<DeviceId> unchecked = new HashSet<>();
    /** When each server's agent first failed to answer, in this outage (nanoTime). */
    private final Map<DeviceId, Long> unreachableSince = new HashMap<>();
    /** When each connected server's agent first failed to answer a round, while it is only late ({@link #late}). */
    private final Map<DeviceId, Long> lateSince = new HashMap<>();
    private long lateAnswers;
    /** How long a round waits for Health: the timeout, or the interval once started (a round is not held up). */
    private Duration healthWait;
    private ServerFailover failover;
    private Predicate<DeviceId> watched = id -> true;
    private ScheduledExecutorService timer;

    /**
     * @param timeout how long one Health call may take
     */
    public AgentWatch(ServerRegistry servers, ServerRecovery recovery, Duration timeout) {
        this.servers = Objects.requireNonNull(servers);
        this.recovery = Objects.requireNonNull(recovery);
        this.timeout = Objects.requireNonNull(timeout);
        this.healthWait = timeout;
    }

    /**
     * Watches only the servers {@code which} accepts. In an ONOS cluster each agent is asked by one node, its
     * device's master; the owners of the chains it serves elsewhere restore them when its device is available
     * again (the ONOS component's device listener).
     */
    public synchronized AgentWatch watching(Predicate<DeviceId> which) {
        this.watched = Objects.requireNonNull(which);
        return this;
    }

    /**
     * Tells {@code failover} of a server whose agent has just stopped answering (suspected: its chains are readied
     * elsewhere and move when its deadline, counted from the first unanswered Health, has passed) and of one that
     * answers again after that (back: its chains stay). The embedded host's failover; in ONOS the server's device
     * going unavailable tells it, and an unavailable device is no longer in the registry this watch reads. Both
     * return at once: the deadline and the move run on the failover's own threads, never on this watch's (where a
     * move held up the next rounds, and a deadline passed only at a round).
     */
    public synchronized AgentWatch failover(ServerFailover failover) {
        this.failover = Objects.requireNonNull(failover);
        return this;
    }

    /**
     * Whether {@code id}'s agent answers Health now, within a round's wait: the embedded host's "still lost?" when a
     * deadline has passed (ONOS asks whether the device is still unavailable, which the master's probe keeps). An
     * agent restarting, or answering late, just past its deadline keeps its chains (before, the deadline was judged
     * at the next round, where such an agent answered; judged at the deadline's instant, a restart of 1.5-2 s moved
     * a scaled-out half back and split it again, e2e test_scale_out).
     */
    public boolean answers(DeviceId id) {
        Optional<MetronServer> s = servers.server(id);
        if (s.isEmpty()) {
            return false;
        }
        try {
            AgentCalls.started(() -> s.get().agent().health()).get(healthWait.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            return false;
        }
    }

    /** The failover deadline of both hosts: {@link #FAILOVER_PROPERTY}, else {@link #FAILOVER_MS}. */
    public static Duration configuredFailover() {
        return Duration.ofMillis(Integer.getInteger(FAILOVER_PROPERTY, FAILOVER_MS));
    }

    /** The interval the hosts start the watch with: {@link #INTERVAL_PROPERTY}, else {@link #INTERVAL_MS}. */
    public static Duration configuredInterval() {
        return Duration.ofMillis(Integer.getInteger(INTERVAL_PROPERTY, INTERVAL_MS));
    }

    /** Checks every {@code interval} on a thread of its own until closed. */
    public synchronized AgentWatch start(Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("agent watch interval must be positive, got " + interval);
        }
        if (timer != null) {
            throw new IllegalStateException("agent watch already started");
        }
        // an agent that does not answer Health within a round counts as not answering in that round: a dead one
        // is not waited for for the client's whole deadline (it retries until then), so its loss is seen in time
        healthWait = interval.compareTo(timeout) < 0 ? interval : timeout;
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metron-agent-watch");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::checkQuietly, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * One round over all registered servers (the timer's work; tests call it directly).
     *
     * @return the servers a recovery ran for and succeeded on
     */
    public synchronized Set<DeviceId> check() {
        Set<DeviceId> recovered = new HashSet<>();
        Set<DeviceId> present = new HashSet<>();
        // ask every agent at once, so an unreachable one costs one timeout per round, not one per server
        Map<MetronServer, CompletableFuture<HealthReply>> health = new LinkedHashMap<>();
        long asked = System.nanoTime();
        servers.servers().stream().filter(s -> watched.test(s.id()))
                .forEach(s -> health.put(s, AgentCalls.started(() -> s.agent().health())));
        long waitUntil = asked + healthWait.toNanos();
        for (Map.Entry<MetronServer, CompletableFuture<HealthReply>> e : health.entrySet()) {
            MetronServer s = e.getKey();
            present.add(s.id());
            HealthReply h;
            try {
                h = e.getValue().get(Math.max(0, waitUntil - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return recovered;
            } catch (Exception ex) {
                if (late(s, asked)) {
                    continue; // connected and answering late: load, not death (not suspected yet)
                }
                unchecked.add(s.id()); // whatever it holds when it answers again must be compared
                unreachable(s.id(), lateSince.getOrDefault(s.id(), asked));
                lateSince.remove(s.id());
                continue;
            }
            Long late = lateSince.remove(s.id());
            if (late != null) {
                lateAnswers++;
                log.info("Agent of {} answered Health {} ms after the first unanswered ask, its connection up "
                        + "throughout: late (load), not suspected", s.id(), (System.nanoTime() - late) / 1_000_000);
            }
            if (unreachableSince.remove(s.id()) != null && failover != null) {
                tell(() -> failover.back(s.id()), s.id(), "return");
            }
            Long before = bootIds.put(s.id(), h.getBootId());
            if (before != null && before != h.getBootId()) {
                log.info("Agent of {} restarted (boot id {} -> {})", s, before, h.getBootId());
                unchecked.add(s.id());
            }
            if (before != null && !unchecked.contains(s.id())) {
                continue;
            }
            try {
                recovery.restore(s);
                unchecked.remove(s.id());
                recovered.add(s.id());
            } catch (RuntimeException ex) {
                unchecked.add(s.id());
                log.warn("Recovery of {} failed, retrying next round: {}", s, ex.getMessage());
            }
        }
        // what deleted chains left on a server whose agent answers (or a switch that is back) goes now
        Set<DeviceId> answering = new HashSet<>(present);
        answering.removeAll(unreachableSince.keySet());
        answering.removeAll(lateSince.keySet());
        try {
            recovery.afterRound(answering);
        } catch (RuntimeException ex) {
            log.warn("Retrying pending removals failed: {}", ex.toString());
        }
                // forget servers that left the registry; if they come back they are compared again
        bootIds.keySet().retainAll(present);
        unchecked.retainAll(present);
        unreachableSince.keySet().retainAll(present);
        lateSince.keySet().retainAll(present);
        return recovered;
    }

    /**
     * Whether {@code s}, which did not answer the Health asked at {@code asked} within the round, is only late: its
     * connection is up (a killed agent's is reset by its kernel at once: {@link AgentClient#connected}) and its
     * silence, since the first unanswered ask, is shorter than {@link #LATE_ROUNDS} rounds. At rate on two loaded
     * CPUs a serving agent answers a round late every few seconds (session 19: 18-32 suspicions in one e2e run of
     * TestTwoServers at load ~15), and each suspicion readied its chains on another server, whose core then ran
     * their pipeline until the next answer. A connection that is down, or silence past the grace, is suspected as
     * before, the failover deadline counted from the first unanswered ask: a dead agent is moved as fast as before,
     * a stopped one with a live connection is readied later (its move after the deadline waits for the readying).
     */
    private boolean late(MetronServer s, long asked) {
        if (!s.agent().connected().orElse(false)) {
            return false;
        }
        long since = lateSince.computeIfAbsent(s.id(), k -> asked);
        return System.nanoTime() - since < healthWait.toNanos() * LATE_ROUNDS - healthWait.toNanos() / 2;
    }

    /** How many late answers on a live connection were not suspected (the log says each one). */
    public synchronized long lateAnswers() {
        return lateAnswers;
    }

    /** {@code asked}: when the Health it did not answer was asked (the outage began before). */
    private void unreachable(DeviceId id, long asked) {
        if (!unreachableSince.containsKey(id)) {
            unreachableSince.put(id, asked);
            // a loaded agent answering late is suspected too, and its chains readied elsewhere meanwhile: the log
            // says when, to tell such a readied move from other holders of a spare's cores
            log.info("Agent of {} did not answer Health within {} ms: suspected, its failover deadline runs", id,
                    healthWait.toMillis());
            if (failover != null) {
                tell(() -> failover.suspected(id, asked), id, "silence");
            }
        }
    }

    private static void tell(Runnable what, DeviceId id, String which) {
        try {
            what.run();
        } catch (RuntimeException e) {
            log.warn("Handling the {} of {} failed: {}", which, id, e.toString());
        }
    }

    private void checkQuietly() {
        try {
            check();
        } catch (RuntimeException e) {
            // an exception would cancel the schedule: the watcher must keep running
            log.warn("Agent watch round failed: {}", e.toString());
        }
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }
}
