package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
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
import org.metron.app.store.FailoverBackup;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.onosproject.net.ConnectPoint;
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
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
    private final Inventory inventory;
    private final ChainReconciler reconciler;
    private final OwnerHandover handover;
    private volatile ServerLoss scaledOut = ServerLoss.NONE;
    private final Map<ChainId, Compiled> compiled = new ConcurrentHashMap<>();
    /** Computes failover backups off the operations' threads, one chain at a time. */
    private final java.util.concurrent.ExecutorService backupWorker =
            java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "metron-backups");
                t.setDaemon(true);
                t.setPriority(Thread.MIN_PRIORITY); // background work: operations and the data path come first
                return t;
            });

    /** A chain's compiled form for the version and profile it was placed with. */
    private static final class Compiled {
        final long version;
        final CompiledChain chain;

        Compiled(long version, CompiledChain chain) {
            this.version = version;
            this.chain = chain;
        }
    }

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
        this.handover = new OwnerHandover(store.chains());
        this.removal = new ChainRemoval(store, servers, deployer, leadership, this::withoutShared,
                this::releasePlacement, compiled::remove);
        this.inventory = new Inventory(store, servers, switches, agentTimeout);
        this.reconciler = new ChainReconciler(this, store, servers, new ServerRecovery(store, this, synthesis,
                agentTimeout), agentTimeout);
    }

    // ---- operations ------------------------------------------------------------------------------------------

    @Override
    public Chain submit(String json) {
        ParsedChain pc = ChainRequests.parse(json);
        ChainCompiler compiler = new ChainCompiler(pc.spec(), synthesis);
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
     * Updates a chain. A running chain goes make-before-break (docs/updates.md): the new version is placed, deployed
     * beside the running one, takes the flow state of its unchanged elements, traffic moves at the switches, and
     * the old version is removed. When the new version cannot be placed or deployed, the running version and its
     * record stay exactly as they were. A chain that holds nothing (FAILED) is simply brought up with the new
     * definition, its old one restored when that fails.
     */
    @Override
    public Chain update(ChainId id, String json) {
        ParsedChain pc = ChainRequests.parse(json);
        if (!pc.id().equals(id)) {
            throw new MetronException(Fault.INVALID_CHAIN, "chain name '" + pc.id() + "' in the body differs "
                    + "from '" + id + "' in the request");
        }
        ChainCompiler compiler = new ChainCompiler(pc.spec(), synthesis);
        compiler.apply(TargetProfile.NONE);
        synchronized (lock(id)) {
            Chain old = existing(id); // a chain no instance has is unknown (404) wherever it is asked for
            requireLeader(id);
            if (old.markedForRemoval()) {
                throw ChainRemoval.refusal(old, "updated");
            }
            requireAgentAnswers(old);
            Chain next = old.withDefinition(pc.json(), pc.deployment());
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
                    bringUp(restore, new ChainCompiler(ChainRequests.parse(old.json()).spec(), synthesis));
                } catch (MetronException again) {
                    log.warn("Restoring {} failed too: {}", id, again.getMessage());
                }
                throw e;
            }
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
            requireFreeIngressEarly(id, d, next.json(), compiler);
            Optional<OffloadChoice> full = placement.chooseFullOffload(id, d.ingressPoint(), d.egressPoint(),
                    compiler);
            sc = full.isPresent() ? null : placement.chooseServerForUpdate(id, d, d.cpuCores(),
                    server -> reservedCoresExcept(server, id), compiler.flowStateDemand(), oldServer);
            oc = full.isPresent() ? full.get()
                    : placement.chooseOffload(id, d.ingressPoint(), sc.server().attachment(sc.nic()).get(), compiler);
            requireFreeIngress(id, d, next.json(), oc);
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
            compiled.put(id, new Compiled(next.version(), oc.compiled()));
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
        List<String> left = tearDown(c);
        if (!left.isEmpty()) {
            log.warn("Chain {}: not removed before bringing it up again: {}", c.id(), left);
        }
        releasePlacement(c.id());
        compiled.remove(c.id());
        return bringUp(c.withState(ChainState.SUBMITTED, why), compilerOf(c));
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
     * Re-routes every deployed chain whose switch rules use {@code device} (it failed, or one of its links
     * did): a new path and offload device from the current network view, the same server, groups and tags,
     * so pipelines keep running and keep their flow state. Chains whose new offload device would need
     * different groups are left as they are (and logged): they need a resubmission.
     *
     * @return the chains that were moved
     */
    public List<ChainId> reroute(DeviceId device) {
        return reroute(device, "device " + device + " unavailable");
    }

    /**
     * {@link #reroute(DeviceId)} naming what failed in logs and reasons ({@code cause}: "device X unavailable",
     * "link X - Y removed"): the device rerouted around may itself be healthy (one end of a lost link).
     */
    public List<ChainId> reroute(DeviceId device, String cause) {
        List<ChainId> moved = new ArrayList<>();
        for (InstalledState st : store.installed().snapshot().values()) {
            if (st.switchRules().stream().noneMatch(r -> r.rule().deviceId().equals(device))) {
                continue;
            }
            ChainId id = st.chainId();
            synchronized (lock(id)) {
                // a chain the operator deleted is never given new rules
                if (!leadership.actsFor(id) || chain(id).map(Chain::markedForRemoval).orElse(true)) {
                    continue;
                }
                try {
                    rerouteOne(id, device, cause);
                    moved.add(id);
                } catch (MetronException e) {
                    log.warn("Chain {} could not be rerouted after {} (its rules on {}): {}", id, cause, device,
                            e.getMessage());
                }
            }
        }
        return moved;
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
        scaledOut = Objects.requireNonNull(scaled);
    }

    /**
     * Moves every chain this instance leads off a server that is gone (its device stayed unavailable past the
     * failover deadline, see the ONOS component): the chain's switch rules come off, its placement and tags are
     * released, and it is placed and deployed again from its stored definition among the servers still available.
     * Its reason then says it moved and from where. A chain no other server can take is left as it is (rules,
     * tags, cores: it comes back if its agent does), its reason naming the lost server and why nothing else can
     * take it; one that cannot be brought up elsewhere after all ends FAILED saying so. Flow state does not move
     * (the agent holding it is gone). First, the chains placed on other servers that had groups scaled out to it
     * get those back on their own servers ({@link #onServerLost}: scaling does it).
     *
     * @return the chains that run again on another server
     */
    public List<ChainId> serverLost(DeviceId server) {
        try {
            List<ChainId> back = scaledOut.serverLost(server);
            if (!back.isEmpty()) {
                log.warn("Chains {}: their groups on lost server {} run on their own servers again", back, server);
            }
        } catch (RuntimeException e) {
            log.warn("Bringing back the groups scaled out to lost server {} failed: {}", server, e.toString());
        }
        List<ChainId> moved = new ArrayList<>();
        for (Placement p : store.placements().snapshot().values()) {
            if (!p.server().map(server::equals).orElse(false)) {
                continue;
            }
            ChainId id = p.chainId();
            synchronized (lock(id)) {
                if (leadership.actsFor(id) && moveOff(id, server)) {
                    moved.add(id);
                }
            }
        }
        return moved;
    }

    /**
     * {@link #serverLost} for one chain, caller holding its lock: moved to another server, or DEGRADED naming what
     * does not run when no other server can take it (nothing torn down: it comes back if its agent does), or
     * FAILED when another server was chosen but the chain could not be brought up there. A chain marked for
     * removal, or no longer placed on {@code server}, is left alone.
     *
     * @return whether the chain now runs on another server
     */
    boolean moveOff(ChainId id, DeviceId server) {
        Optional<Chain> chain = store.chains().get(id).map(Versioned::value);
        boolean stillThere = placement(id).flatMap(Placement::server).map(server::equals).orElse(false);
        if (chain.isEmpty() || !stillThere || chain.get().markedForRemoval()) {
            return false;
        }
        Chain c = chain.get();
        String why = "server " + server + " became unavailable";
        long t0 = System.nanoTime();
        ChainCompiler compiler = compilerOf(c);
        // nothing is torn down unless another server can take the chain: with none, the chain stays placed
        // (its rules, tags and cores) and comes back when its agent does (restart recovery). The lost server is
        // not asked (a dead agent would cost a timeout per question)
        PlacementEngine others = placement.without(server);
        try {
            others.chooseServer(id, c.deployment(), c.deployment().cpuCores(), this::reservedCores,
                    compiler.flowStateDemand());
        } catch (MetronException e) {
            List<org.metron.app.api.PendingPart> down = LostServer.notRunning(store, id, server);
            store.chains().put(id, c.withState(ChainState.DEGRADED, why + "; no other server can take the chain ("
                    + e.getMessage() + "): its traffic does not flow until the agent of " + server
                    + " answers again", down));
            log.warn("Chain {} DEGRADED: its server {} is lost and no other server can take it ({}); not running: "
                    + "{}", id, server, e.getMessage(), down);
            return false;
        }
        long tChecked = System.nanoTime();
        store.installed().get(id).map(Versioned::value).ifPresent(st -> {
            List<String> left = deployer.undeploy(withoutShared(st), Optional.empty());
            if (!left.isEmpty()) {
                log.warn("Chain {}: rules of its placement on lost server {} not removed: {}", id, server, left);
            }
        });
        long tOff = System.nanoTime();
        releasePlacement(id);
        long tReleased = System.nanoTime();
        try {
            Chain up = bringUp(c.withState(ChainState.SUBMITTED, why), compiler, others);
            long tUp = System.nanoTime();
            String to = placement(id).flatMap(Placement::server).map(Object::toString)
                    .orElse("the offload device alone");
            store.chains().put(id, up.withState(up.state(), "moved off " + server + " (unavailable) to " + to));
            // where a failover's time goes after the deadline (agent death -> ACTIVE elsewhere is measured outside)
            log.warn("Chain {} moved off lost server {} to {}: {} in {} ms (another server checked {}, old rules "
                    + "off {}, placement released {}, brought up {})", id, server, to, up.state(), ms(t0, tUp),
                    ms(t0, tChecked), ms(tChecked, tOff), ms(tOff, tReleased), ms(tReleased, tUp));
            return true;
        } catch (MetronException e) {
            store.chains().put(id, c.withState(ChainState.FAILED, why + "; no other server could take the "
                    + "chain: " + e.getMessage()));
            log.warn("Chain {} FAILED with its lost server {}: {}", id, server, e.getMessage());
            return false;
        }
    }

    /** What a reroute installs: the offload choice, the placement it leads to and its switch rules. */
    private static final class Reroute {
        final OffloadChoice offload;
        final Placement placement;
        /** Per device, install order (the offload device last). */
        final Map<DeviceId, List<InstalledRule>> rules;

        Reroute(OffloadChoice offload, Placement placement, Map<DeviceId, List<InstalledRule>> rules) {
            this.offload = offload;
            this.placement = placement;
            this.rules = rules;
        }

        List<InstalledRule> allRules() {
            return rules.values().stream().flatMap(List::stream).collect(Collectors.toList());
        }
    }

    /**
     * Moves a deployed chain's switch rules around a failed device: by a lookup of the backup precomputed for
     * that device when it still fits (computed for the chain's current placement, every device it uses
     * available), else by computing a new path and offload device from the current network view.
     */
    private void rerouteOne(ChainId id, DeviceId failed, String cause) {
        long t0 = System.nanoTime();
        Placement p = placement(id).orElseThrow(() -> new MetronException(Fault.INTERNAL, "chain " + id
                + " has installed rules but no placement"));
        InstalledState st = store.installed().get(id).map(Versioned::value).orElseThrow();
        Optional<FailoverBackup> backup = store.backups().get(id).map(Versioned::value)
                .flatMap(b -> b.failover(failed)).filter(b -> fits(b, p, failed));
        Placement moved;
        if (backup.isPresent()) {
            moved = backup.get().moved();
            store.installed().put(id, deployer.reroute(st, backup.get().switchRulesByDevice()));
            compiled.remove(id); // compiled again for the new offload profile when asked
        } else {
            Reroute r = planReroute(id, placement, planner, compilerOf(existing(id)));
            moved = r.placement;
            store.installed().put(id, deployer.reroute(st, r.rules));
            // the new offload device's alternatives (as before this reroute path had backups); failovers follow
            store.backups().put(id, new BackupConfiguration(id, r.offload.backups(), r.offload.backupProfiles()));
            compiled.put(id, new Compiled(existing(id).version(), r.offload.compiled()));
        }
        store.placements().put(id, moved);
        String how = backup.isPresent() ? "from the backup precomputed for " + failed : "recomputed";
        Chain c = existing(id);
        store.chains().put(id, c.withState(c.state(), "rerouted after " + cause + " (" + how + ", "
                + ms(t0, System.nanoTime()) + " ms): offload on " + moved.offloadDevice().map(Object::toString)
                .orElse("-"), c.pending()));
        log.info("Chain {} rerouted after {} ({} rules moved off {}) {} in {} ms: offload on {}", id, cause,
                st.switchRules().stream().filter(r -> r.rule().deviceId().equals(failed)).count(), failed, how,
                ms(t0, System.nanoTime()), moved.offloadDevice().map(Object::toString).orElse("-"));
        refreshBackups(id);
    }

    /** A backup fits while the chain still has the placement it was computed for and its devices are up. */
    private boolean fits(FailoverBackup b, Placement current, DeviceId failed) {
        return b.basis().equals(current) && b.switchRules().stream().map(r -> r.rule().deviceId()).distinct()
                .allMatch(d -> !d.equals(failed) && placement.network().device(d).isPresent());
    }

    private ChainCompiler compilerOf(Chain chain) {
        return new ChainCompiler(ChainRequests.parse(chain.json()).spec(), synthesis);
    }

    /**
     * A new path and offload device for a deployed chain over {@code pe}'s and {@code rp}'s network view (the
     * current one, or one without a device whose failure is precomputed), keeping server, groups and tags.
     */
    private Reroute planReroute(ChainId id, PlacementEngine pe, RulePlanner rp, ChainCompiler compiler) {
        Chain chain = existing(id);
        DeploymentSpec d = chain.deployment();
        Placement p = placement(id).orElseThrow(() -> new MetronException(Fault.INTERNAL, "chain " + id
                + " has installed rules but no placement"));
        Optional<MetronServer> server = p.server().flatMap(servers::server);
        if (p.server().isPresent() && server.isEmpty()) {
            throw new MetronException(Fault.AGENT_FAILURE, "server " + p.server().get() + " is gone");
        }
        OffloadChoice oc = server.isPresent()
                ? pe.chooseOffload(id, d.ingressPoint(), server.get().attachment(p.nic()).get(), compiler)
                : pe.chooseFullOffload(id, d.ingressPoint(), d.egressPoint(), compiler).orElseThrow(() ->
                new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "no device can take chain " + id + " alone"));
        Tag marker = p.groups().isEmpty() ? tags.allocations().stream()
                .filter(t -> t.chainId().equals(id)).map(TagAllocation::tag).findFirst().orElseThrow()
                : p.groups().get(0).tag();
        Placement moved = new Placement(id, p.server(), p.nic(), p.egressNic(), Optional.of(oc.device()),
                oc.profile().name(), p.groups());
        // planned as compiled, then as scaling left the groups (split, sliced, on other servers, merged)
        Placement basis;
        try {
            basis = ScaledRules.basis(moved, oc.compiled());
        } catch (MetronException e) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "offload device " + oc.device() + " would need "
                    + "other server groups: " + e.getMessage(), e);
        }
        DeploymentPlan plan = rp.plan(id, d, basis, server, false, oc, marker);
        return new Reroute(oc, moved, ScaledRules.of(plan, basis, moved, oc.device(), g -> rp.remotePath(id, d,
                oc.device(), servers.server(g.server().orElseThrow()).orElseThrow(() -> new MetronException(
                        Fault.AGENT_FAILURE, "server " + g.server().get() + " of group " + g.groupId() + " is gone")),
                g, marker, ReplyTraffic.of(oc.compiled()).present()), rp.appId()));
    }

    /**
     * Recomputes, in the background, the chain's backups: for every device holding its switch rules but the
     * ingress device, where the chain would go if that device failed. Called after every change of the chain's
     * placement or rules: deployment, update, reroute here, every scaling operation through
     * {@link #rulesChanged}; a backup computed for an older placement is never used (see {@link #fits}).
     */
    public void refreshBackups(ChainId id) {
        backupWorker.execute(() -> {
            try {
                computeBackups(id);
            } catch (RuntimeException e) {
                log.debug("Backups of {} not computed: {}", id, e.toString());
            }
        });
    }

    /** Stops computing backups (the hosts call it when they stop; chains stay as they are). */
    public void close() {
        backupWorker.shutdownNow();
    }

    /** Waits until every backup computation asked for so far has ended (tests, benchmarks). */
    public void awaitBackups() {
        try {
            backupWorker.submit(() -> { }).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    private void computeBackups(ChainId id) {
        Optional<Placement> basis = placement(id);
        Optional<InstalledState> st = store.installed().get(id).map(Versioned::value);
        Optional<Chain> chain = store.chains().get(id).map(Versioned::value);
        if (basis.isEmpty() || st.isEmpty() || chain.isEmpty() || !leadership.actsFor(id)) {
            return;
        }
        ChainCompiler compiler = compilerOf(chain.get());
        Map<DeviceId, FailoverBackup> out = new java.util.LinkedHashMap<>();
        Set<DeviceId> candidates = new java.util.LinkedHashSet<>();
        st.get().switchRules().forEach(r -> candidates.add(r.rule().deviceId()));
        candidates.remove(chain.get().deployment().ingressPoint().deviceId()); // nothing routes around it
        for (DeviceId f : candidates) {
            NetworkWithout without = new NetworkWithout(placement.network(), f);
            try {
                Reroute r = planReroute(id, placement.over(without), planner.over(without), compiler);
                out.put(f, new FailoverBackup(f, basis.get(), r.placement, r.allRules()));
            } catch (MetronException e) {
                log.debug("Chain {}: no backup for {} failing: {}", id, f, e.getMessage());
            }
        }
        // no chain lock (operations must not wait for this): written only over the configuration read here, and a
        // backup whose basis is not the placement at failure time is never used anyway (fits)
        Optional<Versioned<BackupConfiguration>> cfg = store.backups().get(id);
        if (cfg.isPresent() && placement(id).equals(basis)
                && store.backups().replace(id, cfg.get().version(), cfg.get().value().withFailovers(out))) {
            log.info("Chain {}: failover backups for {} of {} devices", id, out.size(), candidates.size());
        }
    }

    // ---- lifecycle steps -------------------------------------------------------------------------------------

    /** SUBMITTED → ACTIVE, or FAILED with everything released. Caller holds the chain's lock. */
    private Chain bringUp(Chain chain, ChainCompiler compiler) {
        return bringUp(chain, compiler, placement);
    }

    /** {@link #bringUp(Chain, ChainCompiler)} choosing with {@code pe} (e.g. without a lost server). */
    private Chain bringUp(Chain chain, ChainCompiler compiler, PlacementEngine pe) {
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
                requireFreeIngressEarly(id, d, current.json(), compiler);
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
                requireFreeIngress(id, d, current.json(), oc);
                List<Tag> claimed = tags.allocate(sc == null ? oc.device() : sc.server().id(),
                        sc == null ? "" : sc.nic(), d.tagType(), id,
                        markerOnly ? List.of(TagAllocation.EGRESS_GROUP) : groupIds,
                        sc == null ? Set.of() : sc.tagsInUse());
                marker = claimed.get(0);
                p = placementOf(id, sc, oc, markerOnly ? List.of() : claimed);
                store.placements().put(id, p);
            }
            compiled.put(id, new Compiled(current.version(), oc.compiled()));
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
            // ACTIVE at once when the pipeline already runs: DEPLOYED is written only for a pipeline still starting
            // (in an ONOS cluster every state written is a Raft write on the way to ACTIVE, a failover's included)
            current = transition(current, result.running() ? ChainState.ACTIVE : ChainState.DEPLOYED);
            refreshBackups(id);
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

    private static long ms(long from, long to) {
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

    /**
     * Removes what the chain installed and releases what it holds ({@link ChainRemoval}); what could not be removed
     * stays recorded. Answers what is left.
     */
    private List<String> tearDown(Chain chain) {
        return removal.removeInstalled(chain.id()).stream().map(Object::toString).collect(Collectors.toList());
    }

    /**
     * The chain's installed state without the switch rules another chain holds too (chains sharing an ingress point
     * may install the same entry, e.g. a deny rule or the default drop): removing the chain must leave them.
     */
    private InstalledState withoutShared(InstalledState st) {
        Set<Object> others = entriesOfOthers(st.chainId());
        return new InstalledState(st.chainId(), st.server(), st.switchRules().stream()
                .filter(r -> !others.contains(Deployer.entry(r.rule()))).collect(Collectors.toList()),
                st.nicRuleIds(), st.pipeline());
    }

    /** Table entries of the switch rules every other chain installed. */
    private Set<Object> entriesOfOthers(ChainId id) {
        Set<Object> out = new HashSet<>();
        store.installed().snapshot().values().stream().filter(st -> !st.chainId().equals(id))
                .forEach(st -> st.switchRules().forEach(r -> out.add(Deployer.entry(r.rule()))));
        return out;
    }

    private void releasePlacement(ChainId id) {
        store.installed().remove(id);
        store.placements().remove(id);
        store.backups().remove(id);
        tags.release(id);
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
    private Set<Integer> reservedCores(DeviceId server) {
        return reservedCoresExcept(server, null);
    }

    /** Cores promised to placed chains other than {@code chain} (null: all), per server. */
    private Set<Integer> reservedCoresExcept(DeviceId server, ChainId chain) {
        Set<Integer> out = new HashSet<>();
        store.placements().snapshot().values().stream().filter(p -> p.server().map(server::equals).orElse(false))
                .filter(p -> !p.chainId().equals(chain)).forEach(p -> out.addAll(p.cores()));
        return out;
    }

    /**
     * Offload rules of a chain match what arrives on its ingress point, and reply rules what arrives on its egress
     * point when it has a reply ingress: a chain may use a point another chain uses only when their traffic there
     * is disjoint ({@link SharedIngress}); else it is refused, naming both chains and a packet of the overlap.
     */
    private void requireFreeIngress(ChainId id, DeploymentSpec d, String json, OffloadChoice oc) {
        requireFreeIngress(id, d, json, oc.device(), oc.compiled());
    }

    /**
     * {@link #requireFreeIngress} before a server is chosen, as the ingress device would classify the chain (where
     * chains share a point they classify it there): an overlap is reported as such, not as a lack of cores.
     */
    private void requireFreeIngressEarly(ChainId id, DeploymentSpec d, String json, ChainCompiler compiler) {
        DeviceId at = d.ingressPoint().deviceId();
        Optional<org.metron.app.spi.NetworkDevice> device = placement.network().device(at);
        if (device.isPresent() && device.get().role().programmable()) {
            requireFreeIngress(id, d, json, at, compiler.apply(PlacementEngine.profileFor(device.get().role())));
        }
    }

    private void requireFreeIngress(ChainId id, DeploymentSpec d, String json, DeviceId offload, CompiledChain cc) {
        List<ConnectPoint> mine = ReplyTraffic.entryPoints(d, json);
        for (Chain other : store.chains().snapshot().values()) {
            if (other.id().equals(id) || !other.state().holdsResources()) {
                continue;
            }
            List<ConnectPoint> theirs = ReplyTraffic.entryPoints(other.deployment(), other.json());
            for (ConnectPoint p : mine) {
                if (!theirs.contains(p)) {
                    continue;
                }
                Optional<Placement> op = placement(other.id());
                if (op.isEmpty() || op.get().offloadDevice().isEmpty()) {
                    throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "entry point " + p + " already carries "
                            + "chain " + other.id() + ", which is not placed yet; retry once it is");
                }
                SharedIngress.require(entryAt(id, p, d, offload, cc),
                        entryAt(other.id(), p, other.deployment(), op.get().offloadDevice().get(),
                                compiledFor(other, op)));
            }
        }
    }

    private static SharedIngress.Entry entryAt(ChainId id, ConnectPoint p, DeploymentSpec d, DeviceId offload,
                                               CompiledChain cc) {
        boolean replies = !p.equals(d.ingressPoint());
        return SharedIngress.Entry.of(id, p, replies ? d.egressPoint().deviceId() : offload, cc, replies);
    }

    private Object lock(ChainId id) {
        return store.lockFor(id);
    }

    private void requireLeader(ChainId id) {
        if (!leadership.actsFor(id)) {
            throw new MetronException(Fault.NOT_LEADER, "controller instance " + leadership.owner(id)
                    .orElse("(none yet)") + " acts for chain " + id + ": send the update there");
        }
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
        Compiled c = compiled.get(chain.id());
        if (c != null && c.version <= chain.version() && p.isPresent()) {
            return c.chain;
        }
        // another instance placed it, or it is not placed: compile again from the stored definition
        TargetProfile profile = p.map(pl -> TargetProfile.named(pl.offloadProfile())).orElse(TargetProfile.NONE);
        CompiledChain cc = compilerOf(chain).apply(profile);
        if (p.isPresent()) {
            compiled.put(chain.id(), new Compiled(chain.version(), cc));
        }
        return cc;
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
