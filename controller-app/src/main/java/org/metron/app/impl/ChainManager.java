package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.DrainReport;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledState;
import org.metron.app.store.PreparedMoveRecord;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The one implementation of {@link MetronService}: drives a chain through its lifecycle (parse → synthesize →
 * place → deploy → active) and back (remove), keeping the store consistent with what is installed. Plain class:
 * ONOS wires it in {@code org.metron.app.onos.MetronComponent}, the embedded host constructs it directly.
 *
 * <p>Concurrency: operations on one chain are serialized (per-chain lock here, leadership across instances);
 * different chains proceed in parallel except for the short server/core reservation step.
 */
public final class ChainManager implements MetronService, CompiledChains, OwnedChainMoves {
    private static final Logger log = LoggerFactory.getLogger(ChainManager.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final TagAllocator tags;
    private final ChainRemoval removal;
    private final ChainTeardown teardown;
    private final ChainBringUp bringUps;
    private final Inventory inventory;
    private final ChainReconciler reconciler;
    private final OwnerHandover handover;
    private final ChainReroute reroutes;
    private final LostServer lost;
    private final ChainCompilers compilers;
    private final PreparedMoves prepared;
    private final ReadiedCores readied;
    private final ChainUpdates updates;

    public ChainManager(ChainStore store, ServerRegistry servers, SwitchProgrammer switches, Leadership leadership,
                        PlacementEngine placement, RulePlanner planner, Deployer deployer, Duration agentTimeout,
                        Synthesis synthesis) {
        this.store = Objects.requireNonNull(store);
        this.leadership = Objects.requireNonNull(leadership);
        // every pipeline change carries this instance's term of the chain (FencedAgent)
        ServerRegistry fenced = FencedServers.of(servers, leadership);
        this.servers = fenced;
        // and every switch rule write of an operation is checked against the term the operation started with
        switches = FencedSwitches.of(switches);
        placement = placement.without(store::isDrained); // a drained server takes nothing (everything below)
        this.placement = placement;
        this.tags = new TagAllocator(store.tags());
        Objects.requireNonNull(agentTimeout);
        Objects.requireNonNull(synthesis);
        this.compilers = new ChainCompilers(synthesis);
        this.handover = new OwnerHandover(store.chains());
        DataPlaneFailover dataPlane = new DataPlaneFailover(switches, store.armedRules(), agentTimeout.toMillis(),
                leadership.alone());
        store.readRulesAs(dataPlane::plain); // the switches hold armed rules redirected to groups
        this.teardown = new ChainTeardown(store, fenced, deployer, leadership, tags, compilers, dataPlane);
        this.removal = teardown.removal();
        this.reroutes = new ChainReroute(store, fenced, leadership, placement, planner, deployer, tags, compilers,
                dataPlane);
        this.prepared = new PreparedMoves(store.prepared());
        this.readied = new ReadiedCores(prepared, store, leadership, this::dropReadied, agentTimeout);
        this.bringUps = new ChainBringUp(store, fenced, placement, tags, planner, deployer, synthesis, compilers,
                teardown, reroutes, prepared::heldCores, readied);
        this.lost = new LostServer(bringUps, teardown, store, leadership, placement, deployer, compilers,
                new FailoverPreparation(this, store, leadership, placement, prepared, bringUps, teardown, fenced,
                        tags, deployer, compilers, agentTimeout));
        this.inventory = new Inventory(store, fenced, switches, agentTimeout);
        this.reconciler = new ChainReconciler(this, store, fenced, new ServerRecovery(store, this, agentTimeout),
                agentTimeout);
        this.updates = new ChainUpdates(store, fenced, leadership, placement, synthesis, compilers, handover, bringUps,
                teardown, agentTimeout);
    }

    // ---- operations ------------------------------------------------------------------------------------------

    @Override
    public Chain submit(String json) {
        ParsedChain pc = ChainRequests.parse(json);
        ChainCompiler compiler = compilers.of(pc);
        synchronized (store.lockFor(pc.id())) {
            leadership.join(pc.id()); // the instance a new chain is submitted to runs first, so it owns it
            boolean mine = leadership.actsFor(pc.id());
            if (!mine) {
                compiler.apply(TargetProfile.NONE); // bad Click is refused here, not left to the owner
            }
            Optional<Versioned<Chain>> old = store.chains().get(pc.id());
            Chain chain = new Chain(pc.id(), pc.json(), pc.deployment(), ChainState.SUBMITTED, "",
                    old.map(v -> v.value().version() + 1).orElse(0L));
            boolean stored = old.isPresent() && old.get().value().state() == ChainState.FAILED
                    ? store.chains().replace(pc.id(), old.get().version(), chain)
                    : store.chains().putIfAbsent(pc.id(), chain);
            if (!stored) {
                if (old.isPresent() && old.get().value().markedForRemoval()) {
                    throw ChainRemoval.refusal(old.get().value(), "submitted again");
                }
                throw new MetronException(Fault.DUPLICATE_CHAIN, "chain " + pc.id() + " already exists ("
                        + old.map(v -> v.value().state().toString()).orElse("just created") + "); use PUT to "
                        + "update it");
            }
            if (!mine) {
                return handover.awaitBringUp(chain); // stored: its owner brings it up
            }
            // the operation starts here, once this instance runs for the chain: its term fences the writes
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), pc.id())) {
                return bringUp(chain, compiler);
            } catch (MetronException e) {
                if (e.fault() == Fault.INVALID_CHAIN && old.isPresent()) {
                    // bad input stores nothing: the FAILED record it replaced (and its reason) stays
                    store.chains().put(pc.id(), old.get().value());
                }
                throw e;
            }
        }
    }

    /**
     * Updates a chain ({@link ChainUpdates#update}): recorded by whichever instance takes the PUT, applied
     * make-before-break by the chain's owner, refused with the running version untouched when it cannot run.
     */
    @Override
    public Chain update(ChainId id, String json) {
        return updates.update(id, json);
    }

    /** The same definition on another server, make-before-break ({@link ChainUpdates#move}). */
    @Override
    public DrainReport.Move move(ChainId id, Optional<DeviceId> to, String why) {
        return updates.move(id, to, why, () -> dropReadied(id, "an operator's move supersedes it: " + why));
    }

    @Override
    public void dropReadied(ChainId id, String why) {
        lost.discardPrepared(id, why);
    }

    @Override
    public ReadiedCores readiedCores() {
        return readied;
    }

    /** Applies the update recorded with the chain, if any ({@link ChainUpdates#applyUpdate}); caller holds the lock. */
    Chain applyUpdate(ChainId id) {
        return updates.applyUpdate(id);
    }

    /**
     * Records the operator's delete (the chain REMOVING: a tombstone every instance sees, which nothing undoes)
     * before touching any device, then removes what it can ({@link ChainRemoval}). What could not be removed
     * (a dead agent, an unreachable switch) is removed when its device answers again ({@link #retryRemovals}),
     * by another DELETE, or by whoever reconciles the chain; the chain goes once nothing of it is left.
     */
    @Override
    public Optional<Chain> remove(ChainId id) {
        synchronized (store.lockFor(id)) {
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                if (!leadership.actsFor(id)) {
                    // the tombstone every instance sees; the owner removes the chain
                    return handover.remove(store.chains().get(id).orElseThrow(() -> unknown(id)));
                }
                Chain chain = existing(id);
                lost.discardPrepared(id, "the chain is deleted"); // a deleted chain is never placed, nor readied
                if (!chain.markedForRemoval()) {
                    chain = chain.withState(ChainState.REMOVING, "deleted", chain.pending());
                    store.chains().put(id, chain);
                }
                return finishRemoval(chain);
            }
        }
    }

    /** One removal attempt of a chain marked for removal; caller holds the lock. */
    Optional<Chain> finishRemoval(Chain chain) {
        return removal.finish(chain);
    }

    /**
     * Tries again to remove the chains marked for removal that have something left on a device {@code back}
     * accepts (its agent answers again, the switch is available again): the agent watch's rounds and the ONOS
     * device listener call it.
     *
     * @return the chains now gone
     */
    public List<ChainId> retryRemovals(java.util.function.Predicate<DeviceId> back) {
        return removal.retry(back);
    }

    /**
     * Picks up a chain this instance has just come to act for (another instance stopped while acting for it):
     * finishes or redoes a bring-up left half-way, continues a removal, checks a degraded chain's server
     * ({@link ChainReconciler}). Idempotent; an ACTIVE chain whose server answers is left alone.
     *
     * @return what was done, for the log
     */
    public String reconcile(ChainId id) {
        return reconciler.reconcile(id);
    }

    /**
     * Removes what the chain's record says it installed, releases its placement and brings it up again from its
     * stored definition (reconciliation of a bring-up another instance left half-way); caller holds the lock.
     *
     * @throws MetronException when it cannot be brought up (the chain is then FAILED saying why)
     */
    Chain bringUpAgain(Chain c, String why) {
        teardown.clear(c);
        return bringUp(c.withState(ChainState.SUBMITTED, why), compilers.of(c));
    }

    /** Whether {@code device} is a switch the network view has now (an unavailable device is not in it). */
    boolean switchAvailable(DeviceId device) {
        return placement.network().device(device).map(d -> d.role() != org.metron.app.spi.DeviceRole.SERVER)
                .orElse(false);
    }

    @Override
    public ValidationReport validate(String json) {
        return bringUps.validate(json);
    }

    /**
     * Re-routes every deployed chain whose switch rules use {@code device} (it failed, or one of its links did),
     * keeping server, groups and tags ({@link ChainReroute}).
     *
     * @return the chains that were moved
     */
    public List<ChainId> reroute(DeviceId device) {
        return reroutes.reroute(device);
    }

    /** {@link #reroute(DeviceId)} naming what failed ("link X - Y removed": the device may itself be healthy). */
    public List<ChainId> reroute(DeviceId device, String cause) {
        return reroutes.reroute(device, cause);
    }

    /**
     * After a switch-to-switch link failed: moves the chains with a backup for it there (where fast-failover groups
     * already sent their traffic, if they were armed), and reroutes the others using either end
     * ({@link ChainReroute#rerouteLink}).
     *
     * @return the chains that were moved
     */
    public List<ChainId> rerouteLink(org.onosproject.net.Link link, String cause) {
        return reroutes.rerouteLink(link, cause);
    }

    /**
     * Runs {@code action} holding the chain's lock, when this instance leads the chain: work on a chain from
     * outside the lifecycle (restart recovery) must not race its removal or update.
     *
     * @return false when another instance leads the chain (nothing ran)
     */
    public boolean whileLeading(ChainId id, Runnable action) {
        synchronized (store.lockFor(id)) {
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                if (!leadership.actsFor(id)) {
                    return false;
                }
                action.run();
                return true;
            }
        }
    }

    /**
     * What else acts on a lost server: scaling brings back the groups it scaled out to it ({@link ServerLoss});
     * {@link ServerLoss#NONE} by default.
     */
    public void onServerLost(ServerLoss scaled) {
        lost.onServerLost(scaled);
    }

    /**
     * Moves every chain this instance owns off a server that is gone (unavailable past the failover deadline) to
     * another server, or leaves it DEGRADED naming what does not run when none can take it ({@link LostServer}).
     *
     * @return the chains that run again on another server
     */
    public List<ChainId> serverLost(DeviceId server) {
        return lost.serverLost(server);
    }

    /**
     * A server's agent stopped answering (its device went unavailable; the agent watch's first failed round): while
     * the failover deadline runs, the chains this instance owns there are readied on another server, traffic
     * untouched, so that the move after the deadline only switches it ({@link LostServer#prepare}). Returns at once.
     */
    public void serverSuspected(DeviceId server) {
        lost.suspect(server);
    }

    /**
     * A suspected server answers again (within the deadline: its chains stay, restart recovery restores what its
     * agent lost): what was readied for its chains elsewhere is taken back. Returns at once.
     */
    public void serverBack(DeviceId server) {
        lost.back(server);
    }

    /** Waits until what {@link #serverSuspected} and {@link #serverBack} asked for {@code server} has run (tests). */
    void awaitFailoverWork(DeviceId server) {
        lost.settle(server);
    }

    /**
     * Takes back a failover move an owner that stopped during the deadline readied for {@code id} and left recorded
     * (its pipeline and NIC rules on the spare, its tags, its cores): this instance owns the chain now and does not
     * hold the move. Caller holds the chain's lock ({@link ChainReconciler}).
     */
    void takeBackLeftMove(ChainId id) {
        lost.takeBackLeft(id);
    }

    /**
     * This instance's chain ownership, wired the one way both hosts use: reconcile what its owner has work for,
     * including what a stopped owner readied ({@link #leftFailoverMoves}) and chains not armed here ({@link #unarmed};
     * a chain gained is unarmed here whatever this instance kept of it, {@link #gained}). Not started.
     */
    public ChainOwnership ownership() {
        return new ChainOwnership(store.chains(), leadership, this::reconcile, this::leftFailoverMoves,
                System::currentTimeMillis).rearming(this::unarmed, this::gained);
    }

    /**
     * This instance has just come to own the chain: what it kept in memory of the chain's backups and arming, from
     * a time it owned the chain before, may be stale (the owner since may have moved it and armed other groups), so
     * it is forgotten and the chain counts as {@link #unarmed}: it is re-armed from what the switches and the store
     * hold, as any chain taken over. Touches no switch and takes no lock (it runs on the leadership event's thread).
     */
    void gained(ChainId id) {
        reroutes.backups().forget(id);
    }

    /**
     * The chains with a failover move recorded that this instance does not hold: another owner's, or one left by an
     * owner that stopped, which the chain's owner takes back when it reconciles the chain ({@link ChainOwnership}
     * asks on its sweeps).
     */
    public Set<ChainId> leftFailoverMoves() {
        return lost.notHeld();
    }

    /** {@link #serverLost} for one chain, caller holding its lock ({@link LostServer#moveOff}). */
    boolean moveOff(ChainId id, DeviceId server) {
        return lost.moveOff(id, server);
    }

    /**
     * Whether the chain holds rules in the switches (ACTIVE, DEGRADED) and this instance has not computed its
     * backups since it started or took the chain over: what is armed for it is then only in the switches, and
     * {@link #reconcile} re-arms it ({@link ChainOwnership#rearming}).
     */
    public boolean unarmed(ChainId id) {
        return !reroutes.backups().keepsBackups(id) && store.chains().get(id).map(Versioned::value)
                .filter(c -> c.state() == ChainState.ACTIVE || c.state() == ChainState.DEGRADED).isPresent()
                && store.installedRecord(id).isPresent();
    }

    /** Recomputes the chain's failover backups in the background ({@link FailoverBackups#refresh}). */
    public void refreshBackups(ChainId id) {
        reroutes.backups().refresh(id);
    }

    /** Stops computing backups and readying moves (the hosts call it when they stop; chains stay as they are). */
    public void close() {
        reroutes.close();
        prepared.close();
        readied.close();
    }

    /** Waits until every backup computation asked for so far has ended (tests, benchmarks). */
    public void awaitBackups() {
        reroutes.backups().awaitBackups();
    }

    // ---- lifecycle steps -------------------------------------------------------------------------------------

    /** SUBMITTED → ACTIVE, or FAILED with everything released. Caller holds the chain's lock. */
    private Chain bringUp(Chain chain, ChainCompiler compiler) {
        return bringUps.bringUp(chain, compiler, placement);
    }

    /** Cores promised to placed chains, per server. */
    Set<Integer> reservedCores(DeviceId server) {
        return bringUps.reservedCores(server);
    }

    static MetronException unknown(ChainId id) {
        return new MetronException(Fault.UNKNOWN_CHAIN, "no chain named '" + id + "'");
    }

    private Chain existing(ChainId id) {
        return store.chains().get(id).map(Versioned::value).orElseThrow(() -> unknown(id));
    }

    // ---- queries ---------------------------------------------------------------------------------------------

    @Override
    public Collection<Chain> chains() {
        return store.chains().snapshot().values().stream().sorted(Comparator.comparing(Chain::id))
                .collect(Collectors.toList());
    }

    @Override
    public Optional<Chain> chain(ChainId id) {
        return store.chains().get(id).map(Versioned::value);
    }

    @Override
    public List<TrafficClassInfo> trafficClasses(ChainId id) {
        Chain chain = existing(id);
        Optional<Placement> p = placement(id);
        return ClassViews.of(id, compilers.compiled(chain, p), p, store.installed().get(id).map(Versioned::value));
    }

    @Override
    public CompiledChain compiled(ChainId id) {
        return compilers.compiled(existing(id), placement(id));
    }

    @Override
    public void rulesChanged(ChainId id) {
        refreshBackups(id);
    }

    @Override
    public Collection<Placement> placements() {
        return store.placements().snapshot().values();
    }

    @Override
    public Optional<Placement> placement(ChainId id) {
        return store.placements().get(id).map(Versioned::value);
    }

    @Override
    public Collection<Placement> readied() {
        return store.prepared().snapshot().values().stream().map(PreparedMoveRecord::placement)
                .sorted(Comparator.comparing(p -> p.chainId().toString())).collect(Collectors.toList());
    }

    @Override
    public Collection<TagAllocation> tags() {
        return tags.allocations();
    }

    @Override
    public List<ServerInfo> servers() {
        return inventory.servers();
    }

    @Override
    public List<ServerConfigErrors.Refused> refusedServerConfigs() {
        return servers.refusedConfigs();
    }

    @Override
    public List<RuleInfo> rules(DeviceId device) {
        return inventory.rules(device);
    }
}
