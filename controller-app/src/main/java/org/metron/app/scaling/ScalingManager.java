package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport.Move;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.impl.OwnedChainMoves;
import org.metron.app.impl.CompiledChains;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.ServerLoss;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.StoreFactory;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Scaling wired together: the journal and history store, the policy, the executor and the one load monitor.
 * {@link #start()} first completes or rolls back what a previous controller left unfinished, then starts
 * monitoring. Hosts (the ONOS component, the embedded host) construct one next to the ChainManager.
 */
public final class ScalingManager implements ScalingService, ServerLoss, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ScalingManager.class);

    private final ChainStore chains;
    private final Leadership leadership;
    private final ScalingStore store;
    private final ScalingExecutor executor;
    private final LoadMonitor monitor;
    private final Optional<IngressWatch> ingress;
    private final FlowStateAlerts alerts = new FlowStateAlerts();
    private final BlackBoxWatch boxes;
    private final LongSupplier clock;
    private final ServerRegistry servers;
    private final Consumer<ChainId> takeOver = this::recoverTakenOver;
    private final ScalingRequests requests;
    private final OwnedChainMoves moves;
    /** First wait before a failed lost-server merge back is tried again; doubled each time up to the max. */
    static final long RETRY_FIRST_MS = 1_000;
    static final long RETRY_MAX_MS = 30_000;
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "metron-lost-server-retry");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param ports       switch port counters for the ingress trigger (empty: agents' load reports only)
     * @param portStatsMs how often the ingress trigger asks the switches
     */
    public ScalingManager(ChainStore chains, StoreFactory factory, ServerRegistry servers, SwitchProgrammer switches,
                          CompiledChains compiled, OwnedChainMoves moves, ApplicationId app, Duration timeout,
                          ScalingPolicy.Params params, int intervalMs, Leadership leadership, LongSupplier clock,
                          Optional<PortCounters> ports, int portStatsMs) {
        this(chains, factory, servers, switches, compiled, moves, app, timeout, params, intervalMs, leadership, clock,
                ports, portStatsMs, Optional.empty());
    }

    /**
     * @param moves    this instance's chain moves (the chain manager's), run for the moves asked of this instance as
     *                 a chain's owner ({@link #move}); a split takes back the failover move readied for its chain
     *                 with them ({@link OwnedChainMoves#dropReadied})
     * @param scaleOut plans the rules to other servers: with it, a split that finds no core free on its chain's
     *                 server places the new half on another server (docs/scaling.md#scale-out)
     */
    public ScalingManager(ChainStore chains, StoreFactory factory, ServerRegistry servers, SwitchProgrammer switches,
                          CompiledChains compiled, OwnedChainMoves moves, ApplicationId app, Duration timeout,
                          ScalingPolicy.Params params, int intervalMs, Leadership leadership, LongSupplier clock,
                          Optional<PortCounters> ports, int portStatsMs, Optional<RulePlanner> scaleOut) {
        this.clock = clock;
        this.moves = Objects.requireNonNull(moves);
        // every pipeline change an operation makes carries this instance's term of the chain
        this.servers = org.metron.app.impl.FencedServers.of(servers, leadership);
        this.chains = chains;
        this.leadership = leadership;
        this.store = new ScalingStore(factory);
        this.executor = new ScalingExecutor(chains, store, this.servers, switches, compiled, moves, app, timeout,
                clock, scaleOut.orElse(null), new java.security.SecureRandom(), leadership);
        this.boxes = new BlackBoxWatch(chains, leadership);
        this.monitor = new LoadMonitor(chains, this.servers, new ScalingPolicy(params), executor, clock, intervalMs,
                leadership, alerts, boxes);
        this.ingress = ports.map(p -> new IngressWatch(chains, p, monitor::sampleNow, clock, portStatsMs));
        this.requests = new ScalingRequests(store.requests(), leadership, this::runHere, ScalingRequests.WAIT);
    }

    /**
     * Recovers the unfinished operations of the chains this instance owns, then starts the monitor; from then on,
     * a chain this instance comes to own (its owner stopped, maybe mid-operation) has its unfinished operation
     * finished or rolled back here.
     */
    public List<ScalingEvent> start() {
        List<ScalingEvent> recovered = executor.recover(leadership::actsFor);
        // a rollback that left something keeps its operation journalled: tried again on the retry schedule
        store.operations().snapshot().keySet().stream().filter(leadership::actsFor)
                .forEach(c -> retries.schedule(() -> recoverTakenOver(c, 2 * RETRY_FIRST_MS), RETRY_FIRST_MS,
                        TimeUnit.MILLISECONDS));
        leadership.addListener(takeOver);
        requests.start();
        monitor.start();
        ingress.ifPresent(IngressWatch::start);
        return recovered;
    }

    /**
     * A chain this instance came to own: its journalled operation, if any, is recovered off the event thread, then
     * the operators' requests that wait for its owner are run.
     */
    private void recoverTakenOver(ChainId chain) {
        recoverTakenOver(chain, RETRY_FIRST_MS);
    }

    /**
     * One try at recovering {@code chain}'s journalled operation; a try that fails (in the 3-node cluster test the
     * journal's Raft session was closed for a moment while the partitions re-elected after the owner's death, and
     * the exception was lost in the executor: the operation stayed journalled and the chain never scaled again) or
     * that leaves the operation journalled (a server not registered yet) is tried again after {@code retryMs},
     * doubled each time up to {@link #RETRY_MAX_MS}, while this instance owns the chain.
     */
    private void recoverTakenOver(ChainId chain, long retryMs) {
        if (retries.isShutdown()) {
            return;
        }
        retries.execute(() -> {
            boolean again;
            try {
                List<ScalingEvent> done = executor.recover(c -> c.equals(chain) && leadership.actsFor(c));
                if (!done.isEmpty()) {
                    log.warn("Chain {}: finished the scaling operation its previous owner left: {}", chain, done);
                }
                again = leadership.actsFor(chain) && store.operations().get(chain).isPresent();
            } catch (RuntimeException e) {
                log.warn("Chain {}: recovering the scaling operation its previous owner left failed, retrying in {} "
                        + "ms: {}", chain, retryMs, e.toString());
                again = true;
            }
            if (again && !retries.isShutdown()) {
                retries.schedule(() -> recoverTakenOver(chain, Math.min(2 * retryMs, RETRY_MAX_MS)), retryMs,
                        TimeUnit.MILLISECONDS);
            }
            requests.tookOver(chain);
        });
    }

    public ScalingExecutor executor() {
        return executor;
    }

    /** The load monitor (tests hand it a report of their own). */
    LoadMonitor monitor() {
        return monitor;
    }

    @Override
    public List<ScalingEvent> history(ChainId chain) {
        return store.history(chain);
    }

    @Override
    public Map<ChainId, List<ScalingEvent>> history() {
        return store.allHistory();
    }

    @Override
    public List<FlowStateAlert> flowStateAlerts(ChainId chain) {
        return alerts.recent(chain);
    }

    @Override
    public List<FlowStateAlert> flowStateAlerts() {
        return alerts.recent();
    }

    @Override
    public List<BlackBoxStatus> blackBoxes(ChainId chain) {
        return boxes.of(chain);
    }

    @Override
    public List<BlackBoxStatus> blackBoxes() {
        return boxes.all();
    }

    @Override
    public Optional<ChainLoad> load(ChainId chain) {
        return monitor.latest(chain);
    }

    @Override
    public Optional<Double> ingressPps(ChainId chain) {
        return ingress.flatMap(w -> w.ingressPps(chain));
    }

    @Override
    public Collection<ScalingOperation> inProgress() {
        return store.inProgress();
    }

    /** The operator requests this instance records for, or runs as, chains' owners (tests). */
    ScalingRequests requests() {
        return requests;
    }

    /**
     * Splits now when this instance owns the chain; else the owner does, asked through {@link ScalingRequests}
     * (whose {@link ScalingRequests.Pending} says the owner has not answered yet).
     */
    @Override
    public ScalingEvent split(ChainId chain, String group) {
        return leadership.actsFor(chain) ? splitHere(chain, group)
                : requests.ask(chain, ScalingRequest.Kind.SPLIT, group, null).event().orElseThrow();
    }

    /** Merges now when this instance owns the chain; else as {@link #split}. */
    @Override
    public ScalingEvent merge(ChainId chain, String keep, String retire) {
        if (keep == null || retire == null) {
            throw new MetronException(Fault.INVALID_CHAIN, "merge needs the group to keep and the group to retire");
        }
        return leadership.actsFor(chain) ? mergeHere(chain, keep, retire)
                : requests.ask(chain, ScalingRequest.Kind.MERGE, keep, retire).event().orElseThrow();
    }

    /** Moves the chain now when this instance owns it (impl.ChainMoves); else as {@link #split}. */
    @Override
    public Move move(ChainId chain, Optional<DeviceId> to, String why) {
        return leadership.actsFor(chain) ? moves.move(chain, to, why)
                : requests.ask(chain, ScalingRequest.Kind.MOVE, to.map(DeviceId::toString).orElse(null), why).move()
                .orElseThrow();
    }

    /** Runs a request another instance recorded, this instance owning its chain, and answers it. */
    private ScalingRequest runHere(ScalingRequest r) {
        switch (r.kind()) {
            case SPLIT:
                return r.answered(splitHere(r.chain(), r.first()));
            case MERGE:
                return r.answered(mergeHere(r.chain(), r.first(), r.second()));
            default:
                return r.answered(moves.move(r.chain(), Optional.ofNullable(r.first()).map(DeviceId::deviceId),
                        r.second()));
        }
    }

    private ScalingEvent splitHere(ChainId chain, String group) {
        Optional<GroupLoad> measured = monitor.latest(chain).flatMap(c -> c.groups().stream()
                .filter(g -> g.groupId().equals(group)).findFirst());
        // What the group holds is the placement's (a group split right after the deploy, before the first load
        // report, is still a group of one class); what its packets look like is the measurement's
        Optional<GroupAssignment> placed = chains.placement(chain).flatMap(p -> p.group(group));
        if (placed.isPresent() && placed.get().classIds().size() == 1) {
            // one class: divided by the source-port bit its measured packets split most evenly
            // (docs/scaling.md#class-split); without counts, by the lowest bit its slice does not use
            int cls = placed.get().classIds().get(0);
            ClassBits bits = measured.map(g -> g.classBits().get(cls)).orElse(null);
            int bit = bits != null && bits.bestBit().isPresent() ? bits.bestBit().getAsInt()
                    : Integer.numberOfTrailingZeros(~placed.get().slice(cls).mask());
            return executor.splitClass(chain, group, cls, bit, "requested by an operator: class " + cls
                    + " divided by source-port bit " + bit, clock.getAsLong());
        }
        Map<Integer, Double> rates = new HashMap<>();
        measured.ifPresent(g -> rates.putAll(g.classRates()));
        return executor.split(chain, group, rates, "requested by an operator", clock.getAsLong());
    }

    private ScalingEvent mergeHere(ChainId chain, String keep, String retire) {
        return executor.merge(chain, keep, retire, "requested by an operator", clock.getAsLong());
    }

    /**
     * Brings the groups scaled out to a lost server back to their chains' own servers, for the chains this
     * instance leads ({@link ScalingExecutor#serverLost}); the flows each last reported there are named in the
     * history.
     */
    @Override
    public List<ChainId> serverLost(DeviceId server) {
        return bringBack(server, RETRY_FIRST_MS);
    }

    /**
     * One round of {@link #serverLost}. A merge back that failed (a switch refused the re-tag, a call timed out:
     * rolled back, the group still placed on the lost server, its traffic lost) is tried again after {@code retryMs},
     * then after twice that each time up to {@link #RETRY_MAX_MS}, until every group is back or the server's agent
     * answers again (its restart recovery then restores what it held there).
     */
    private List<ChainId> bringBack(DeviceId server, long retryMs) {
        List<ChainId> back = new ArrayList<>();
        boolean again = false;
        for (Placement p : chains.placements().snapshot().values()) {
            ChainId id = p.chainId();
            if (p.server().equals(Optional.of(server)) || !leadership.actsFor(id)
                    || p.groups().stream().noneMatch(g -> g.server().equals(Optional.of(server)))) {
                continue;
            }
            try {
                List<ScalingEvent> tried = executor.serverLost(id, server, g -> monitor.lastFlows(server, id, g));
                if (tried.stream().anyMatch(e -> e.outcome() == ScalingEvent.Outcome.DONE)) {
                    back.add(id);
                }
                again |= tried.stream().anyMatch(e -> e.outcome() != ScalingEvent.Outcome.DONE);
            } catch (MetronException e) {
                log.warn("Chain {}: its groups on lost server {} not brought back: {}", id, server, e.getMessage());
                again = true;
            }
        }
        if (again && !retries.isShutdown()) {
            log.warn("Groups on lost server {} not all back: trying again in {} ms", server, retryMs);
            CompletableFuture<?> probe = probe(server);
            retries.schedule(() -> {
                try {
                    if (probe.isDone() && !probe.isCompletedExceptionally()) {
                        log.info("Server {} answers again: its groups stay there (restart recovery)", server);
                        return;
                    }
                    List<ChainId> now = bringBack(server, Math.min(2 * retryMs, RETRY_MAX_MS));
                    if (!now.isEmpty()) {
                        log.warn("Chains {}: their groups on lost server {} run on their own servers again", now,
                                server);
                    }
                } catch (RuntimeException e) {
                    // an exception would end the retries: they must go on
                    log.warn("Bringing back the groups of lost server {} failed: {}", server, e.toString());
                }
            }, retryMs, TimeUnit.MILLISECONDS);
        }
        return back;
    }

    /**
     * A health check of {@code server}'s agent, not waited for: one that has succeeded by the time of the retry means
     * the agent answers again (a dead one's fails, or is still being retried on UNAVAILABLE until its deadline).
     */
    private CompletableFuture<?> probe(DeviceId server) {
        try {
            return servers.server(server).map(s -> (CompletableFuture<?>) s.agent().health())
                    .orElseGet(() -> CompletableFuture.failedFuture(new IllegalStateException(server + " is gone")));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        leadership.removeListener(takeOver);
        requests.close();
        retries.shutdownNow();
        ingress.ifPresent(IngressWatch::close);
        monitor.close();
        boxes.close();
    }
}
