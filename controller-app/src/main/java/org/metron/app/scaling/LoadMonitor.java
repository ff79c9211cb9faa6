package org.metron.app.scaling;

import org.metron.agent.v1.ClassStats;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.FlowStateStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.impl.ReplyTraffic;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.synth.ClassGroup;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The one load monitor for all chains (docs/scaling.md#monitoring): one StreamLoad subscription per server at
 * {@link #INTERVAL_MS}; each report is turned into per-group loads (busy-cycle delta of the group over the
 * cycle delta of its core) and per-class rates for every chain placed on that server, and handed to the policy.
 * Decisions run on a small pool, at most one per chain at a time, so chains rebalance independently.
 */
public final class LoadMonitor implements AutoCloseable {
    /**
     * Report interval asked of every agent, by default: the decision path reacts on the first overloaded report,
     * so this bounds detection; a report costs the agent one counter sweep and the controller one pass over the
     * server's chains.
     */
    public static final int INTERVAL_MS = 50;
    private static final Logger log = LoggerFactory.getLogger(LoadMonitor.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final ScalingPolicy policy;
    private final ScalingExecutor executor;
    private final LongSupplier clock;
    // what every report reads, read again only after a change (ChangedSnapshot says why)
    private final ChangedSnapshot<ChainId, Placement> placementsSeen;
    private final ChangedSnapshot<ChainId, ScalingOperation> operationsSeen;
    private final int intervalMs;
    private final Leadership leadership;
    private final FlowStateAlerts alerts;
    /** Where every report's black boxes go (null: nowhere). */
    private final BlackBoxWatch boxes;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r,
            "metron-load-monitor"));
    private final ExecutorService workers = Executors.newFixedThreadPool(2, r -> daemon(r, "metron-scaling"));
    private final Map<DeviceId, AutoCloseable> subscriptions = new ConcurrentHashMap<>();
    private final Map<DeviceId, Stats> last = new HashMap<>();
    /** Per server its last two reports: groups scaled out to it are measured on them (docs/scaling.md#scale-out). */
    private final Map<DeviceId, Stats> previous = new HashMap<>();
    /** When each server last reported, and which servers' groups cannot be measured now. */
    private final ReportAges ages;
    /** Per server its last report, kept when its stream fails: what a lost server's groups last held. */
    private final Map<DeviceId, Stats> lastSeen = new ConcurrentHashMap<>();
    private final Map<ChainId, ChainLoad> latest = new ConcurrentHashMap<>();
    private final Set<ChainId> busy = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * @param intervalMs load report interval asked of every agent
     */
    public LoadMonitor(ChainStore store, ServerRegistry servers, ScalingPolicy policy, ScalingExecutor executor,
                       LongSupplier clock, int intervalMs, Leadership leadership) {
        this(store, servers, policy, executor, clock, intervalMs, leadership, new FlowStateAlerts());
    }

    /**
     * @param alerts where the reports' flow-state counters are compared (elements that shed flows)
     */
    public LoadMonitor(ChainStore store, ServerRegistry servers, ScalingPolicy policy, ScalingExecutor executor,
                       LongSupplier clock, int intervalMs, Leadership leadership, FlowStateAlerts alerts) {
        this(store, servers, policy, executor, clock, intervalMs, leadership, alerts, null);
    }

    /**
     * @param boxes where every report's black-box NFs go (docs/blackbox.md); null for nowhere
     */
    public LoadMonitor(ChainStore store, ServerRegistry servers, ScalingPolicy policy, ScalingExecutor executor,
                       LongSupplier clock, int intervalMs, Leadership leadership, FlowStateAlerts alerts,
                       BlackBoxWatch boxes) {
        this.boxes = boxes;
        this.leadership = Objects.requireNonNull(leadership);
        this.alerts = Objects.requireNonNull(alerts);
        if (intervalMs < 10) {
            throw new IllegalArgumentException("load report interval " + intervalMs + " ms is below 10 ms");
        }
        this.intervalMs = intervalMs;
        this.ages = new ReportAges(intervalMs);
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.policy = Objects.requireNonNull(policy);
        this.executor = Objects.requireNonNull(executor);
        this.clock = Objects.requireNonNull(clock);
        this.placementsSeen = new ChangedSnapshot<>(store.placements());
        this.operationsSeen = new ChangedSnapshot<>(executor.journal().operations());
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Subscribes to every registered server now and to servers registered later (checked every second, when each
     * server's resources are read again for the executor too).
     */
    public void start() {
        timer.scheduleWithFixedDelay(this::subscribeAllQuietly, 0, 1, TimeUnit.SECONDS);
    }

    /**
     * One round of subscriptions; a round that fails is logged and the next one tries again. An exception would
     * cancel the schedule for good: in the 3-node cluster test a node whose registry could not describe a server
     * for a moment (its driver not bound there yet: ItemNotFoundException) never measured any chain again, so its
     * operators' splits of a one-class group were refused for want of a load report.
     */
    private void subscribeAllQuietly() {
        try {
            subscribeAll();
        } catch (RuntimeException e) {
            log.warn("Subscribing to the servers' load failed, retrying in 1 s: {}", e.toString());
        }
    }

    private void subscribeAll() {
        for (MetronServer s : servers.servers()) {
            executor.resources().refresh(s);
            subscriptions.computeIfAbsent(s.id(), id -> s.agent().streamLoad(intervalMs, policy.params().alertLoad(),
                    stats -> onReport(id, stats),
                    err -> streamFailed(id, err)));
        }
    }

    /**
     * The load stream of {@code id} failed (its agent stopping, restarting or gone, or its client closed): the
     * subscription goes (the next round makes another) and its groups are not measured until it reported twice.
     */
    void streamFailed(DeviceId id, Throwable err) {
        log.warn("Load stream of {} failed: {}; resubscribing", id, err.toString());
        AutoCloseable sub = subscriptions.remove(id);
        close(sub);
        synchronized (this) {
            last.remove(id);
            previous.remove(id);
            ages.failed(id, err.getMessage());
        }
        if (boxes != null) {
            boxes.forget(id);
        }
    }

    /** One report from one server: measure every chain placed there, act on decisions. */
    void onReport(DeviceId server, Stats stats) {
        if (closed) {
            return;
        }
        List<ChainLoad> loads = new ArrayList<>();
        synchronized (this) {
            Stats prev = last.get(server);
            if (prev != null && stats.getTimestampNs() <= prev.getTimestampNs()) {
                return; // an older report overtaken by a sample taken on demand
            }
            last.put(server, stats);
            lastSeen.put(server, stats);
            // the other servers' reports are judged against this one's arrival, not against the time each chain is
            // measured: at load 14 this thread once stalled 1.5 s between the two, and every group of a chain read
            // stale, those on this very server too (e2e replies scale-out test)
            long arrived = clock.getAsLong();
            ages.reported(server, arrived, prev != null);
            if (boxes != null) {
                boxes.observe(server, stats, clock.getAsLong());
            }
            if (prev == null) {
                return;
            }
            previous.put(server, prev);
            alerts.observe(server, prev, stats, clock.getAsLong());
            Map<ChainId, Placement> placements = placementsSeen.get();
            ages.retainChains(placements.keySet());
            for (Placement p : placements.values()) {
                // once per report of the chain's own server; its groups on other servers are measured on the
                // latest two reports of theirs (docs/scaling.md#scale-out)
                if (!p.server().equals(Optional.of(server)) || p.groups().isEmpty()) {
                    continue;
                }
                Optional<Chain> chain = store.chains().get(p.chainId()).map(Versioned::value);
                if (chain.isEmpty() || chain.get().state() != ChainState.ACTIVE) {
                    continue;
                }
                int[] free = executor.freeCores(p, placements.values(), operationsSeen.get().values());
                measure(chain.get(), p, arrived).ifPresent(c -> loads.add(c.withFreeCores(free[0], free[1])));
            }
        }
        long now = clock.getAsLong();
        for (ChainLoad c : loads) {
            latest.put(c.chain(), c);
            if (busy.contains(c.chain())) {
                continue;
            }
            Optional<ScalingDecision> d = policy.evaluate(c, now);
            // only the instance acting for the chain changes it (every instance measures)
            if (d.isPresent() && leadership.actsFor(c.chain()) && busy.add(c.chain())) {
                workers.execute(() -> act(c, d.get()));
            }
        }
    }

    /**
     * The flows group {@code group} of {@code chain} held in the last report {@code server} sent (every stateful
     * element's table summed), also after its stream failed; empty when no report of it was received.
     */
    OptionalLong lastFlows(DeviceId server, ChainId chain, String group) {
        Stats s = lastSeen.get(server);
        Optional<GroupStats> g = s == null ? Optional.empty() : group(s, chain, group);
        return g.map(x -> OptionalLong.of(x.getFlowStateList().stream().mapToLong(FlowStateStats::getFlows).sum()))
                .orElse(OptionalLong.empty());
    }

    /**
     * Samples a server now instead of at its next report (a switch saw one of its chains' ingress rate jump),
     * unless its last report is too recent to measure a load against (busy cycles are counted per batch).
     */
    void sampleNow(DeviceId server) {
        Long at = ages.lastAt(server);
        if (closed || at == null || clock.getAsLong() - at < intervalMs / 2) {
            return;
        }
        servers.server(server).ifPresent(s -> s.agent().getStats("").thenAccept(stats -> onReport(server, stats)));
    }

    private void act(ChainLoad c, ScalingDecision d) {
        // cores touched, per server (a group scaled out runs on another)
        Map<String, Set<Integer>> touched = new HashMap<>();
        c.groups().stream().filter(g -> d.groups().contains(g.groupId())).forEach(g -> touched.computeIfAbsent(
                g.remote() ? g.server() : c.server(), k -> new HashSet<>()).add(g.core()));
        try {
            Map<Integer, Double> rates = new HashMap<>();
            c.groups().stream().filter(g -> g.groupId().equals(d.groups().get(0))).forEach(g -> rates.putAll(
                    g.classRates()));
            ScalingEvent e = executor.execute(d, rates);
            // the new core of a split cools down too
            e.coresAfter().stream().filter(k -> !e.coresBefore().contains(k)).forEach(k -> touched.computeIfAbsent(
                    c.server(), x -> new HashSet<>()).add(k));
            log.info("{}: {} in {} ms ({} ms after onset)", d, e.outcome(), e.durationMs(), e.reactionMs());
        } catch (RuntimeException e) {
            log.warn("{} failed: {}", d, e.getMessage());
        } finally {
            // cool down even after a failure: no retry storm every interval
            touched.forEach((server, cores) -> policy.applied(c.chain(), server, cores, clock.getAsLong()));
            busy.remove(c.chain());
        }
    }

    /** Busy cycles per core between two reports of one server, and the seconds between them. */
    private static Map<Integer, Long> coreCycles(Stats prev, Stats now) {
        Map<Integer, Long> out = new HashMap<>();
        Map<Integer, CoreStats> before = new HashMap<>();
        prev.getCoresList().forEach(x -> before.put(x.getCore(), x));
        for (CoreStats x : now.getCoresList()) {
            CoreStats b = before.get(x.getCore());
            if (b != null) {
                out.put(x.getCore(), x.getTotalCycles() - b.getTotalCycles());
            }
        }
        return out;
    }

    /**
     * Caller holds this monitor: each group on the last two reports of the server it runs on; a group whose server
     * has no fresh two reports when the chain's server's report {@code arrived} is not measured ({@link ReportAges}),
     * the others are.
     */
    private Optional<ChainLoad> measure(Chain chain, Placement p, long arrived) {
        Map<String, ClassGroup> bases;
        ReplyTraffic replies;
        try {
            bases = executor.baseGroups(chain.id(), p);
            replies = executor.replies(chain.id());
        } catch (RuntimeException e) {
            log.debug("No compiled form of {}: {}", chain.id(), e.getMessage());
            return Optional.empty();
        }
        List<GroupLoad> groups = new ArrayList<>();
        Map<String, ReportAges.Gap> unmeasured = new HashMap<>();
        for (GroupAssignment ga : p.groups()) {
            DeviceId on = ga.server().orElse(p.server().get());
            Stats prev = previous.get(on);
            Stats now = last.get(on);
            Optional<ReportAges.Gap> unknown = ages.unmeasurable(on, prev != null && now != null, arrived);
            if (unknown.isPresent()) {
                unmeasured.put(ga.groupId(), unknown.get());
                continue;
            }
            double secs = (now.getTimestampNs() - prev.getTimestampNs()) / 1e9;
            Optional<GroupStats> a = group(prev, chain.id(), ga.groupId());
            Optional<GroupStats> b = group(now, chain.id(), ga.groupId());
            Long cycles = coreCycles(prev, now).get(ga.core());
            if (a.isEmpty() || b.isEmpty() || cycles == null || cycles <= 0 || b.get().getCore() != ga.core()) {
                return Optional.empty(); // the chain is changing (or just started): measure next interval
            }
            double load = Math.max(0, b.get().getBusyCycles() - a.get().getBusyCycles()) / (double) cycles;
            Map<Integer, Long> pa = new HashMap<>();
            a.get().getClassesList().forEach(x -> pa.put(x.getClassId(), x.getPackets()));
            Map<Integer, Double> rates = new HashMap<>();
            for (ClassStats x : b.get().getClassesList()) {
                if (ga.classIds().contains(x.getClassId())) {
                    rates.put(x.getClassId(), Math.max(0, x.getPackets() - pa.getOrDefault(x.getClassId(), 0L))
                            / secs);
                }
            }
            ga.classIds().forEach(cls -> rates.putIfAbsent(cls, 0.0));
            ClassGroup base = bases.get(ga.groupId());
            List<List<Integer>> units = replies.units(ga.classIds());
            Map<Integer, ClassBits> bits = new HashMap<>();
            if (!base.classifies()) {
                // classes no reply class answers may be divided by source-port bits (docs/scaling.md#class-split)
                units.stream().filter(u -> u.size() == 1).map(u -> u.get(0)).forEach(cls -> classBits(a.get(),
                        b.get(), cls, ga.slice(cls)).ifPresent(x -> bits.put(cls, x)));
            }
            // a group whose classes move only together (replies and the flows they answer) cannot split
            GroupLoad gl = new GroupLoad(ga.groupId(), ga.core(), Math.min(1.0, load), rates, base.statefulKey(),
                    !base.classifies() && units.size() >= 2, ga.slices(), bits);
            groups.add(ga.remote() ? gl.onServer(on.toString()) : gl);
        }
        ages.logChanges(chain.id(), unmeasured, groups.stream().map(GroupLoad::groupId).collect(Collectors.toSet()));
        return Optional.of(new ChainLoad(chain.id(), p.server().get().toString(), chain.deployment().autoScale(),
                chain.deployment().cpuCores(), chain.deployment().maxCpuCores(), groups).withUnmeasured(unmeasured.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().why))));
    }

    /** Fewer TCP/UDP packets than this in one interval: judge the bits on the group's counts so far instead. */
    private static final long MIN_INTERVAL_PACKETS = 32;

    /** How a class's packets spread over the source-port bits: in the interval, or so far when it saw too few. */
    private static Optional<ClassBits> classBits(GroupStats prev, GroupStats now, int cls, ClassSlice slice) {
        Optional<ClassStats> b = now.getClassesList().stream().filter(x -> x.getClassId() == cls).findFirst();
        if (b.isEmpty() || b.get().getSportOnesCount() != ClassSlice.BITS) {
            return Optional.empty();
        }
        Optional<ClassStats> a = prev.getClassesList().stream().filter(x -> x.getClassId() == cls
                && x.getSportOnesCount() == ClassSlice.BITS).findFirst();
        long packets = b.get().getL4Packets();
        long[] ones = new long[ClassSlice.BITS];
        for (int k = 0; k < ones.length; k++) {
            ones[k] = b.get().getSportOnes(k);
        }
        if (a.isPresent() && packets - a.get().getL4Packets() >= MIN_INTERVAL_PACKETS) {
            packets -= a.get().getL4Packets();
            for (int k = 0; k < ones.length; k++) {
                ones[k] -= a.get().getSportOnes(k);
            }
        }
        return Optional.of(new ClassBits(slice, packets, ones));
    }

    private static Optional<GroupStats> group(Stats s, ChainId chain, String group) {
        return s.getGroupsList().stream().filter(g -> g.getPipelineId().equals(chain.name())
                && g.getGroupId().equals(group)).findFirst();
    }

    /** The latest measurement of a chain. */
    public Optional<ChainLoad> latest(ChainId chain) {
        return Optional.ofNullable(latest.get(chain));
    }

    @Override
    public void close() {
        closed = true;
        placementsSeen.close();
        operationsSeen.close();
        timer.shutdownNow();
        subscriptions.values().forEach(LoadMonitor::close);
        subscriptions.clear();
        workers.shutdown();
        try {
            workers.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void close(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            log.debug("closing a load subscription: {}", e.toString());
        }
    }
}
