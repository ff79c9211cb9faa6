package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ChainUpdate;
import org.metron.app.api.DeploymentSpec;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledState;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The one implementation of {@link MetronService}: drives a chain through its lifecycle (parse → synthesize →
 * place → deploy → active) and back (remove), keeping the store consistent with what is installed. Plain class:
 * ONOS wires it in {@code org.metron.app.onos.MetronComponent}, the embedded host constructs it directly.
 *
 * <p>Concurrency: operations on one chain are serialized (per-chain lock here, leadership across instances);
 * different chains proceed in parallel except for the short server/core reservation step.
 */
public final class ChainManager implements MetronService, CompiledChains {
    private static final Logger log = LoggerFactory.getLogger(ChainManager.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final SwitchProgrammer switches;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final TagAllocator tags;
    private final RulePlanner planner;
    private final Deployer deployer;
    private final Duration agentTimeout;
    private final Synthesis synthesis;
    private final ChainRemoval removal;
    private final ChainTeardown teardown;
    private final SharedIngressCheck ingress;
    private final Inventory inventory;
    private final ChainReconciler reconciler;
    private final OwnerHandover handover;
    private final ChainReroute reroutes;
    private final LostServer lost;
    private final ChainCompilers compilers;

    public ChainManager(ChainStore store, ServerRegistry servers, SwitchProgrammer switches, Leadership leadership,
                        PlacementEngine placement, RulePlanner planner, Deployer deployer, Duration agentTimeout,
                        Synthesis synthesis) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.switches = Objects.requireNonNull(switches);
        this.leadership = Objects.requireNonNull(leadership);
        this.placement = Objects.requireNonNull(placement);
        this.tags = new TagAllocator(store.tags());
        this.planner = Objects.requireNonNull(planner);
        this.deployer = Objects.requireNonNull(deployer);
        this.agentTimeout = Objects.requireNonNull(agentTimeout);
        this.synthesis = Objects.requireNonNull(synthesis);
        this.compilers = new ChainCompilers(synthesis);
        this.handover = new OwnerHandover(store.chains());
        this.teardown = new ChainTeardown(store, servers, deployer, leadership, tags, compilers);
        this.removal = teardown.removal();
        this.ingress = new SharedIngressCheck(store, placement, compilers);
        this.reroutes = new ChainReroute(store, servers, leadership, placement, planner, deployer, tags, compilers);
        this.lost = new LostServer(this, store, leadership, placement, deployer, compilers);
        this.inventory = new Inventory(store, servers, switches, agentTimeout);
        this.reconciler = new ChainReconciler(this, store, servers, new ServerRecovery(store, this, synthesis,
                agentTimeout), agentTimeout);
    }

    // ---- operations ------------------------------------------------------------------------------------------

    @Override
    public Chain submit(String json) {
        ParsedChain pc = ChainRequests.parse(json);
        ChainCompiler compiler = compilers.of(pc);
        synchronized (lock(pc.id())) {
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
            try {
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
     * Updates a chain. The operator's new definition is first recorded with the chain, beside the one that runs
     * ({@link ChainUpdate}), by whichever instance takes the PUT; the chain's owner applies it ({@link #applyUpdate})
     * and an instance that does not own the chain waits for the outcome ({@link OwnerHandover#awaitUpdate}).
     * A running chain goes make-before-break (docs/updates.md): the new version is placed, deployed beside the
     * running one, takes the flow state of its unchanged elements, traffic moves at the switches, and the old version
     * is removed. When the new version cannot be placed or deployed, the running version and its record stay exactly
     * as they were, the update recorded as refused with the error. A chain that holds nothing (FAILED) is simply
     * brought up with the new definition, its old one restored when that fails.
     */
    @Override
    public Chain update(ChainId id, String json) {
        ParsedChain pc = ChainRequests.parse(json);
        if (!pc.id().equals(id)) {
            throw new MetronException(Fault.INVALID_CHAIN, "chain name '" + pc.id() + "' in the body differs "
                    + "from '" + id + "' in the request");
        }
        ChainCompiler compiler = new ChainCompiler(pc.spec(), synthesis); // cached once the owner runs it
        compiler.apply(TargetProfile.NONE); // bad Click is refused where the PUT arrives, whoever owns the chain
        synchronized (lock(id)) {
            // a chain no instance has is unknown (404) wherever it is asked for
            Versioned<Chain> old = store.chains().get(id).orElseThrow(() -> unknown(id));
            if (old.value().markedForRemoval()) {
                throw ChainRemoval.refusal(old.value(), "updated");
            }
            Chain asked = old.value().withUpdate(Optional.of(new ChainUpdate(pc.json(), pc.deployment())));
            if (!store.chains().replace(id, old.version(), asked)) {
                throw new MetronException(Fault.INVALID_REQUEST, "chain " + id + " changed while it was being "
                        + "updated; retry PUT");
            }
            if (!leadership.actsFor(id)) {
                return handover.awaitUpdate(asked); // recorded: its owner applies it
            }
            return applyUpdate(asked, compiler);
        }
    }

    /**
     * Applies the update recorded with the chain, if any (its owner reconciling it: the instance that took the
     * PUT did not own the chain, or its owner stopped mid-update); caller holds the lock.
     */
    Chain applyUpdate(ChainId id) {
        Chain c = existing(id);
        if (!c.updatePending() || c.markedForRemoval()) {
            return c;
        }
        ChainCompiler compiler;
        try {
            compiler = new ChainCompiler(ChainRequests.parse(c.update().get().json()).spec(), synthesis); // as PUT
        } catch (MetronException e) {
            refuse(id, c.update().get(), e);
            throw e;
        }
        return applyUpdate(c, compiler);
    }

    /** {@link #update} on the owner, {@code asked} recorded with its update; caller holds the lock. */
    private Chain applyUpdate(Chain asked, ChainCompiler compiler) {
        ChainUpdate u = asked.update().orElseThrow();
        try {
            return runUpdate(asked, u, compiler);
        } catch (MetronException e) {
            refuse(asked.id(), u, e);
            throw e;
        }
    }

    /** Records that the owner refused {@code u} (the chain runs its previous definition), for whoever waits. */
    private void refuse(ChainId id, ChainUpdate u, MetronException e) {
        store.chains().get(id).map(Versioned::value).filter(c -> !c.markedForRemoval())
                .ifPresent(c -> store.chains().put(id, c.withUpdate(Optional.of(u.refused(e)))));
    }

    private Chain runUpdate(Chain old, ChainUpdate u, ChainCompiler compiler) {
        ChainId id = old.id();
        requireAgentAnswers(old);
        Chain next = old.withDefinition(u.json(), u.deployment());
        Optional<InstalledState> running = store.installed().get(id).map(Versioned::value);
        Optional<Placement> placed = placement(id);
        if (running.isPresent() && placed.isPresent()) {
            try {
                return makeBeforeBreak(old, next, compiler, running.get(), placed.get());
            } catch (MetronException e) {
                store.chains().put(id, old); // the running version, its record included, is untouched
                log.warn("Update of {} to version {} refused, version {} runs on: {}", id, next.version(),
                        old.version(), e.getMessage());
                throw e;
            }
        }
        tearDown(old);
        store.chains().put(id, next);
        try {
            return bringUp(next, compiler);
        } catch (MetronException e) {
            // the new definition could not run: bring the old one back
            log.warn("Update of {} failed ({}), restoring the previous definition", id, e.getMessage());
            Chain restore = next.withDefinition(old.json(), old.deployment());
            store.chains().put(id, restore);
            try {
                bringUp(restore, compilers.of(restore));
            } catch (MetronException again) {
                log.warn("Restoring {} failed too: {}", id, again.getMessage());
            }
            throw e;
        }
    }

    /**
     * Places and deploys {@code next} beside the running {@code old}, moves traffic and state to it and removes
     * the old version ({@link MakeBeforeBreak}). Caller holds the chain's lock.
     *
     * @throws MetronException when the new version cannot be placed or deployed; nothing of it is left
     */
    private Chain makeBeforeBreak(Chain old, Chain next, ChainCompiler compiler, InstalledState running,
                                  Placement oldPlacement) {
        ChainId id = next.id();
        DeploymentSpec d = next.deployment();
        long t0 = System.nanoTime();
        CompiledChain oldCompiled = compiledFor(old, Optional.of(oldPlacement));
        Optional<MetronServer> oldServer = running.server().flatMap(servers::server);
        ServerChoice sc;
        OffloadChoice oc;
        Placement p;
        List<Tag> claimed;
        synchronized (store.reservationLock()) {
            ingress.requireEarly(id, d, next.json(), compiler);
            Optional<OffloadChoice> full = placement.chooseFullOffload(id, d.ingressPoint(), d.egressPoint(),
                    compiler);
            sc = full.isPresent() ? null : placement.chooseServerForUpdate(id, d, d.cpuCores(),
                    server -> reservedCoresExcept(server, id), compiler.flowStateDemand(), oldServer);
            oc = full.isPresent() ? full.get()
                    : placement.chooseOffload(id, d.ingressPoint(), sc.server().attachment(sc.nic()).get(), compiler);
            ingress.require(id, d, next.json(), oc);
            String version = RulePlanner.VERSION_MARK + "v" + next.version();
            List<String> groupIds = oc.compiled().groups().stream().map(g -> groupId(g) + version)
                    .collect(Collectors.toList());
            claimed = tags.allocate(sc == null ? oc.device() : sc.server().id(), sc == null ? "" : sc.nic(),
                    d.tagType(), id, groupIds.isEmpty() ? List.of(TagAllocation.EGRESS_GROUP) : groupIds,
                    sc == null ? Set.of() : sc.tagsInUse());
            p = placementOf(id, sc, oc, groupIds.isEmpty() ? List.of() : claimed, version,
                    oldPlacement.portShares());
        }
        try {
            Optional<MetronServer> server = Optional.ofNullable(sc).map(ServerChoice::server);
            DeploymentPlan plan = planner.plan(id, d, p, server, sc != null && sc.nicRules(), oc, claimed.get(0));
            StateCarry carry = sc == null ? StateCarry.none()
                    : StateCarry.between(oldPlacement, oldCompiled, p, oc.compiled());
            DeployPipelineRequest oldPipeline = oldPlacement.groups().isEmpty() ? null
                    : RulePlanner.pipeline(id, oldPlacement, oldCompiled, oldPlacement.groups().get(0).tag());
            MakeBeforeBreak.Result r = new MakeBeforeBreak(deployer).run(id,
                    new MakeBeforeBreak.Running(withoutShared(running), oldServer, oldPipeline), plan, carry);
            // the new version carries the traffic: the store says so, the old version's tags go
            store.installed().put(id, r.installed);
            store.placements().put(id, p);
            store.backups().put(id, new BackupConfiguration(id, oc.backups(), oc.backupProfiles()));
            compilers.placed(next, oc.compiled());
            List<Tag> oldTags = tags.allocations().stream().filter(t -> t.chainId().equals(id))
                    .map(TagAllocation::tag).filter(t -> !claimed.contains(t)).collect(Collectors.toList());
            tags.release(id, oldTags);
            String reason = "updated from version " + old.version() + " make-before-break in "
                    + ms(t0, System.nanoTime()) + " ms: " + r.carried + " flows carried over"
                    + (carry.sources().isEmpty() ? " (no unchanged stateful element)" : " " + carry)
                    + ", " + r.synced + " synced after the move"
                    + (r.left.isEmpty() ? "" : "; not removed of the old version: " + r.left);
            Chain done = next.withState(ChainState.ACTIVE, reason);
            store.chains().put(id, done);
            refreshBackups(id);
            log.info("Chain {} {}", id, reason);
            return done;
        } catch (RuntimeException e) {
            tags.release(id, claimed);
            if (e instanceof MetronException) {
                throw e;
            }
            throw new MetronException(Fault.INTERNAL, "chain " + id + " update: " + e, e);
        }
    }

    /**
     * Records the operator's delete (the chain REMOVING: a tombstone every instance sees, which nothing undoes)
     * before touching any device, then removes what it can ({@link ChainRemoval}). What could not be removed
     * (a dead agent, an unreachable switch) is removed when its device answers again ({@link #retryRemovals}),
     * by another DELETE, or by whoever reconciles the chain; the chain goes once nothing of it is left.
     */
    @Override
    public Optional<Chain> remove(ChainId id) {
        synchronized (lock(id)) {
            if (!leadership.actsFor(id)) {
                // the tombstone every instance sees; the owner removes the chain
                return handover.remove(store.chains().get(id).orElseThrow(() -> unknown(id)));
            }
            Chain chain = existing(id);
            if (!chain.markedForRemoval()) {
                chain = chain.withState(ChainState.REMOVING, "deleted", chain.pending());
                store.chains().put(id, chain);
            }
            return finishRemoval(chain);
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
        ParsedChain pc = ChainRequests.parse(json);
        ChainCompiler compiler = new ChainCompiler(pc.spec(), synthesis);
        CompiledChain base = compiler.apply(TargetProfile.NONE);
        try {
            DeploymentSpec d = pc.deployment();
            Optional<OffloadChoice> full = placement.chooseFullOffload(pc.id(), d.ingressPoint(), d.egressPoint(),
                    compiler);
            ServerChoice sc = full.isPresent() ? null
                    : placement.chooseServer(pc.id(), d, d.cpuCores(), this::reservedCores,
                            compiler.flowStateDemand());
            OffloadChoice oc = full.isPresent() ? full.get() : placement.chooseOffload(pc.id(), d.ingressPoint(),
                    sc.server().attachment(sc.nic()).get(), compiler);
            List<Tag> preview = tags.peek(d.tagType(), oc.compiled().groups().size(),
                    sc == null ? Set.of() : sc.tagsInUse());
            Placement p = placementOf(pc.id(), sc, oc, preview);
            return new ValidationReport(pc.id(), oc.compiled().classes().size(), oc.compiled().groups().size(),
                    oc.compiled().offloadRules().size(), Optional.of(p), "");
        } catch (MetronException e) {
            if (e.fault() == Fault.INVALID_CHAIN) {
                throw e;
            }
            return new ValidationReport(pc.id(), base.classes().size(), base.groups().size(),
                    base.offloadRules().size(), Optional.empty(), e.getMessage());
        }
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
     * Runs {@code action} holding the chain's lock, when this instance leads the chain: work on a chain from
     * outside the lifecycle (restart recovery) must not race its removal or update.
     *
     * @return false when another instance leads the chain (nothing ran)
     */
    public boolean whileLeading(ChainId id, Runnable action) {
        synchronized (lock(id)) {
            if (!leadership.actsFor(id)) {
                return false;
            }
            action.run();
            return true;
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

    /** {@link #serverLost} for one chain, caller holding its lock ({@link LostServer#moveOff}). */
    boolean moveOff(ChainId id, DeviceId server) {
        return lost.moveOff(id, server);
    }

    /** Recomputes the chain's failover backups in the background ({@link ChainReroute#refreshBackups}). */
    public void refreshBackups(ChainId id) {
        reroutes.refreshBackups(id);
    }

    /** Stops computing backups (the hosts call it when they stop; chains stay as they are). */
    public void close() {
        reroutes.close();
    }

    /** Waits until every backup computation asked for so far has ended (tests, benchmarks). */
    public void awaitBackups() {
        reroutes.awaitBackups();
    }

    // ---- lifecycle steps -------------------------------------------------------------------------------------

    /** SUBMITTED → ACTIVE, or FAILED with everything released. Caller holds the chain's lock. */
    private Chain bringUp(Chain chain, ChainCompiler compiler) {
        return bringUp(chain, compiler, placement);
    }

    /** {@link #bringUp(Chain, ChainCompiler)} choosing with {@code pe} (e.g. without a lost server). */
    Chain bringUp(Chain chain, ChainCompiler compiler, PlacementEngine pe) {
        ChainId id = chain.id();
        DeploymentSpec d = chain.deployment();
        Chain current = chain;
        long t0 = System.nanoTime();
        try {
            current = transition(current, ChainState.SYNTHESIZED);
            Placement p;
            OffloadChoice oc;
            ServerChoice sc;
            Tag marker;
            synchronized (store.reservationLock()) {
                // a chain the offload device handles completely needs no server at all
                ingress.requireEarly(id, d, current.json(), compiler);
                Optional<OffloadChoice> full = pe.chooseFullOffload(id, d.ingressPoint(), d.egressPoint(),
                        compiler);
                sc = full.isPresent() ? null : pe.chooseServer(id, d, d.cpuCores(), this::reservedCores,
                        compiler.flowStateDemand());
                oc = full.isPresent() ? full.get()
                        : pe.chooseOffload(id, d.ingressPoint(), sc.server().attachment(sc.nic()).get(),
                        compiler);
                List<String> groupIds = oc.compiled().groups().stream().map(ChainManager::groupId)
                        .collect(Collectors.toList());
                boolean markerOnly = groupIds.isEmpty();
                // checked after the first compile so that bad Click is reported as such, not as a conflict
                ingress.require(id, d, current.json(), oc);
                List<Tag> claimed = tags.allocate(sc == null ? oc.device() : sc.server().id(),
                        sc == null ? "" : sc.nic(), d.tagType(), id,
                        markerOnly ? List.of(TagAllocation.EGRESS_GROUP) : groupIds,
                        sc == null ? Set.of() : sc.tagsInUse());
                marker = claimed.get(0);
                p = placementOf(id, sc, oc, markerOnly ? List.of() : claimed);
                store.placements().put(id, p);
            }
            compilers.placed(current, oc.compiled());
            current = transition(current, ChainState.PLACED);
            log.info("Chain {} placed on {} cores {} offload {} ({} servers queried)", id,
                    p.server().map(Object::toString).orElse("no server"), p.cores(), oc.device(),
                    sc == null ? 0 : sc.queried());

            long tPlaced = System.nanoTime();
            // the agent starts the pipeline while the switch rules are planned and staged
            Optional<Deployer.ServerStart> started = Optional.ofNullable(sc).map(c -> deployer.start(id, c.server(),
                    c.nicRules() ? RulePlanner.nicRules(id, p) : List.of(), RulePlanner.pipeline(id, p,
                    oc.compiled(), marker)));
            DeploymentPlan plan;
            try {
                plan = planner.plan(id, d, p, Optional.ofNullable(sc).map(ServerChoice::server),
                        sc != null && sc.nicRules(), oc, marker);
            } catch (RuntimeException e) {
                started.ifPresent(Deployer.ServerStart::abandon);
                throw e;
            }
            long tPlanned = System.nanoTime();
            Deployer.Result result = deployer.deploy(plan, started);
            long tDeployed = System.nanoTime();
            store.installed().put(id, result.installed());
            // only rerouting a deployed chain reads it: written once traffic flows, not before
            store.backups().put(id, new BackupConfiguration(id, oc.backups(), oc.backupProfiles()));
            current = transition(current, ChainState.DEPLOYED);
            refreshBackups(id);
            if (result.running()) {
                current = transition(current, ChainState.ACTIVE);
            }
            // where a submission's time goes (the submit->traffic figure is measured from outside)
            log.info("Chain {} {} in {} ms: synthesis+placement {}, rule planning {}, deployment {}, store {} "
                            + "({} switch rules)", id, current.state(), ms(t0, System.nanoTime()), ms(t0, tPlaced),
                    ms(tPlaced, tPlanned), ms(tPlanned, tDeployed), ms(tDeployed, System.nanoTime()),
                    plan.ruleCount());
            return current;
        } catch (MetronException e) {
            releasePlacement(id);
            if (e.fault() == Fault.INVALID_CHAIN) {
                // bad Click surfaces at the first compile, inside placement: bad input stores nothing
                store.chains().remove(id);
            } else {
                store.chains().put(id, current.withState(ChainState.FAILED, e.getMessage()));
            }
            throw e;
        } catch (RuntimeException e) {
            releasePlacement(id);
            store.chains().put(id, current.withState(ChainState.FAILED, "internal error: " + e));
            throw new MetronException(Fault.INTERNAL, "chain " + id + ": " + e, e);
        }
    }

    static long ms(long from, long to) {
        return (to - from) / 1_000_000;
    }

    /**
     * An update tears the running chain down before it brings the new definition up: with its agent down it
     * could do neither, nor restore the old one, so it is refused while the running chain is still whole.
     */
    private void requireAgentAnswers(Chain chain) {
        Optional<DeviceId> serverId = store.installed().get(chain.id()).map(Versioned::value)
                .flatMap(InstalledState::server);
        if (serverId.isEmpty()) {
            return;
        }
        MetronServer server = servers.server(serverId.get()).orElseThrow(() -> new MetronException(
                Fault.AGENT_FAILURE, "chain " + chain.id() + " not updated: its server " + serverId.get()
                + " is no longer registered; the running chain is untouched"));
        try {
            server.agent().health().get(agentTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetronException(Fault.AGENT_FAILURE, "chain " + chain.id() + " not updated: interrupted");
        } catch (ExecutionException | TimeoutException e) {
            throw new MetronException(Fault.AGENT_FAILURE, "chain " + chain.id() + " not updated: the agent "
                    + server.agent().target() + " of " + server.id() + " does not answer (" + e + "); the "
                    + "running chain is untouched", e);
        }
    }

    /** Removes what the chain installed ({@link ChainTeardown#tearDown}); answers what is left. */
    private List<String> tearDown(Chain chain) {
        return teardown.tearDown(chain);
    }

    /** {@link ChainTeardown#withoutShared}: what removing the chain may take off the switches. */
    InstalledState withoutShared(InstalledState st) {
        return teardown.withoutShared(st);
    }

    /** {@link ChainTeardown#releasePlacement}. */
    void releasePlacement(ChainId id) {
        teardown.releasePlacement(id);
    }

    private Chain transition(Chain c, ChainState next) {
        Chain n = c.withState(next, "");
        store.chains().put(c.id(), n);
        return n;
    }

    /** The placement of a chain; {@code sc} is null when the chain needs no server. */
    private static Placement placementOf(ChainId id, ServerChoice sc, OffloadChoice oc, List<Tag> groupTags) {
        return placementOf(id, sc, oc, groupTags, "", Set.of());
    }

    /**
     * {@link #placementOf} for one version of the chain: its group ids end with {@code version} ("~v2"), its
     * groups' port shares avoid {@code oldShares}, those of the version running beside it until the move.
     */
    private static Placement placementOf(ChainId id, ServerChoice sc, OffloadChoice oc, List<Tag> groupTags,
                                         String version, Set<Integer> oldShares) {
        if (sc == null) {
            return new Placement(id, Optional.empty(), "", "", Optional.of(oc.device()), oc.profile().name(),
                    List.of());
        }
        List<GroupAssignment> groups = new ArrayList<>();
        List<ClassGroup> cgs = oc.compiled().groups();
        for (int g = 0; g < cgs.size(); g++) {
            // groups share the reserved cores round-robin; scaling gives a group its own core later
            int core = sc.cores().get(g % sc.cores().size());
            groups.add(new GroupAssignment(groupId(cgs.get(g)) + version, groupTags.get(g), core,
                    cgs.get(g).classIds()));
        }
        return new Placement(id, Optional.of(sc.server().id()), sc.nic(), sc.egressNic(), Optional.of(oc.device()),
                oc.profile().name(), Placement.withPortShares(groups, oldShares));
    }

    static String groupId(ClassGroup g) {
        return "g" + g.id();
    }

    /** Cores promised to placed chains, per server. */
    Set<Integer> reservedCores(DeviceId server) {
        return reservedCoresExcept(server, null);
    }

    /** Cores promised to placed chains other than {@code chain} (null: all), per server. */
    private Set<Integer> reservedCoresExcept(DeviceId server, ChainId chain) {
        Set<Integer> out = new HashSet<>();
        store.placements().snapshot().values().stream().filter(p -> p.server().map(server::equals).orElse(false))
                .filter(p -> !p.chainId().equals(chain)).forEach(p -> out.addAll(p.cores()));
        return out;
    }

    private Object lock(ChainId id) {
        return store.lockFor(id);
    }

    private static MetronException unknown(ChainId id) {
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
        return ClassViews.of(id, compiledFor(chain, p), p, store.installed().get(id).map(Versioned::value));
    }

    @Override
    public CompiledChain compiled(ChainId id) {
        return compiledFor(existing(id), placement(id));
    }

    @Override
    public void rulesChanged(ChainId id) {
        refreshBackups(id);
    }

    private CompiledChain compiledFor(Chain chain, Optional<Placement> p) {
        return compilers.compiled(chain, p);
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
