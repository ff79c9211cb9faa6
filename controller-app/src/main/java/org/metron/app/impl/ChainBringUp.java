package org.metron.app.impl;


import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.NicRule;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.ValidationReport;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.store.PreparedMoveRecord;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * Brings a chain up: synthesis, placement (server, cores, offload, tags, reserved under the store's reservation
 * lock), rule planning and deployment, SUBMITTED → ACTIVE or FAILED with everything released; the same placement
 * for the new version of a running chain updated make-before-break ({@link MakeBeforeBreak}), and for a dry run
 * (validate). {@link ChainManager} decides when; callers hold the chain's lock.
 */
final class ChainBringUp {
    private static final Logger log = LoggerFactory.getLogger(ChainBringUp.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final PlacementEngine placement;
    private final TagAllocator tags;
    private final RulePlanner planner;
    private final Deployer deployer;
    private final Synthesis synthesis;
    private final ChainCompilers compilers;
    private final SharedIngressCheck ingress;
    private final ChainTeardown teardown;
    private final ChainReroute reroutes;
    /**
     * Cores held on a server by the failover moves readied there (by any instance, {@link PreparedMoves}) for chains
     * other than the one given (null: all).
     */
    private final BiFunction<DeviceId, ChainId, Set<Integer>> held;
    /** Of those, the cores this instance's readied moves hold: a bring-up refused for cores takes them back. */
    private final ReadiedCores readied;

    ChainBringUp(ChainStore store, ServerRegistry servers, PlacementEngine placement, TagAllocator tags,
                 RulePlanner planner, Deployer deployer, Synthesis synthesis, ChainCompilers compilers,
                 ChainTeardown teardown, ChainReroute reroutes,
                 BiFunction<DeviceId, ChainId, Set<Integer>> held, ReadiedCores readied) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.placement = Objects.requireNonNull(placement);
        this.tags = Objects.requireNonNull(tags);
        this.planner = Objects.requireNonNull(planner);
        this.deployer = Objects.requireNonNull(deployer);
        this.synthesis = Objects.requireNonNull(synthesis);
        this.compilers = Objects.requireNonNull(compilers);
        this.ingress = new SharedIngressCheck(store, placement, compilers);
        this.teardown = Objects.requireNonNull(teardown);
        this.reroutes = Objects.requireNonNull(reroutes);
        this.held = Objects.requireNonNull(held);
        this.readied = Objects.requireNonNull(readied);
    }

    /**
     * SUBMITTED → ACTIVE, or FAILED with everything released, choosing with {@code pe} (e.g. without a lost
     * server). Caller holds the chain's lock.
     */
    Chain bringUp(Chain chain, ChainCompiler compiler, PlacementEngine pe) {
        ChainId id = chain.id();
        Deployment d = chain.deployment();
        Chain current = chain;
        long t0 = System.nanoTime();
        try {
            current = transition(current, ChainState.SYNTHESIZED);
            Placement p0; // chosen in the loop below (the lambdas after it take them effectively final)
            OffloadChoice oc0;
            ServerChoice sc0;
            Tag marker0;
            for (boolean reclaimed = false; ; reclaimed = true) {
                try {
                    synchronized (store.reservationLock()) {
                        // a chain the offload device handles completely needs no server at all
                        ingress.requireEarly(id, d, current.json(), compiler);
                        Optional<OffloadChoice> full = pe.chooseFullOffload(id, ingress(d), egress(d), compiler);
                        sc0 = full.isPresent() ? null : pe.chooseServer(id, d, d.cpuCores(), this::reservedCores,
                                compiler.flowStateDemand());
                        oc0 = full.isPresent() ? full.get()
                                : pe.chooseOffload(id, ingress(d), sc0.server().attachment(sc0.nic()).get(), compiler);
                        List<String> groupIds = oc0.compiled().groups().stream().map(ChainBringUp::groupId)
                                .collect(Collectors.toList());
                        boolean markerOnly = groupIds.isEmpty();
                        // checked after the first compile so that bad Click is reported as such, not as a conflict
                        ingress.require(id, d, current.json(), oc0);
                        List<Tag> claimed = tags.allocate(sc0 == null ? oc0.device() : sc0.server().id(),
                                sc0 == null ? "" : sc0.nic(), d.tagType(), id,
                                markerOnly ? List.of(TagAllocation.EGRESS_GROUP) : groupIds,
                                sc0 == null ? Set.of() : sc0.tagsInUse());
                        marker0 = claimed.get(0);
                        p0 = placementOf(id, sc0, oc0, markerOnly ? List.of() : claimed);
                        store.placements().put(id, p0);
                    }
                    break;
                } catch (MetronException e) {
                    // no server had the cores: those moves readied for other chains hold are taken back, once
                    // (outside the reservation lock: a readying takes it holding its chain's lock)
                    if (reclaimed || !readied.reclaimFor(id, e, pe, x -> x.chooseServer(id, d, d.cpuCores(),
                            this::reservedCores, compiler.flowStateDemand()))) {
                        throw e;
                    }
                }
            }
            Placement p = p0;
            OffloadChoice oc = oc0;
            ServerChoice sc = sc0;
            Tag marker = marker0;
            compilers.placed(current, compiler, oc.compiled());
            current = transition(current, ChainState.PLACED);
            log.info("Chain {} placed on {} cores {} offload {} ({} servers queried)", id,
                    p.server().map(Object::toString).orElse("no server"), p.cores(), oc.device(),
                    sc == null ? 0 : sc.queried());

            long tPlaced = System.nanoTime();
            // the agent starts the pipeline while the switch rules are planned and staged
            Optional<Deployer.ServerStart> started = Optional.ofNullable(sc).map(c -> deployer.start(id, c.server(),
                    c.nicRules() ? AgentRequests.nicRules(id, p) : List.of(), AgentRequests.pipeline(id, p,
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
            // the chain's record before anything is committed (as a reroute's intent): an owner that stops after
            // committing some of it leaves what it installed known to the next owner, which removes it with the
            // chain or before bringing it up again; a recorded rule a device does not hold reads as not installed.
            // A failed deployment (rolled back) has it removed with its placement. Written once: it is the result.
            InstalledState intent = Deployer.installed(plan);
            recordIntent(id, intent, started);
            Deployer.Result result = deployer.deploy(plan, started);
            long tDeployed = System.nanoTime();
            if (!result.installed().equals(intent)) {
                store.installed().put(id, result.installed());
            }
            // only rerouting a deployed chain reads it: written once traffic flows, not before
            store.backups().put(id, new BackupConfiguration(id, oc.backups(), oc.backupProfiles()));
            // ACTIVE at once when the pipeline already runs: DEPLOYED is written only for a pipeline still starting
            // (in an ONOS cluster every state written is a Raft write on the way to ACTIVE, a failover's included)
            current = transition(current, result.running() ? ChainState.ACTIVE : ChainState.DEPLOYED);
            reroutes.backups().refresh(id);
            // where a submission's time goes (the submit->traffic figure is measured from outside)
            log.info("Chain {} {} in {} ms: synthesis+placement {}, rule planning {}, deployment {}, store {} "
                            + "({} switch rules)", id, current.state(), ms(t0, System.nanoTime()), ms(t0, tPlaced),
                    ms(tPlaced, tPlanned), ms(tPlanned, tDeployed), ms(tDeployed, System.nanoTime()),
                    plan.ruleCount());
            return current;
        } catch (MetronException e) {
            if (e.fault() == Fault.NOT_LEADER) {
                throw e; // another instance owns the chain now: its records are that owner's to write
            }
            teardown.releasePlacement(id);
            if (e.fault() == Fault.INVALID_CHAIN) {
                // bad Click surfaces at the first compile, inside placement: bad input stores nothing
                store.chains().remove(id);
            } else {
                store.chains().put(id, current.withState(ChainState.FAILED, e.getMessage()));
            }
            throw e;
        } catch (RuntimeException e) {
            teardown.releasePlacement(id);
            store.chains().put(id, current.withState(ChainState.FAILED, "internal error: " + e));
            throw new MetronException(Fault.INTERNAL, "chain " + id + ": " + e, e);
        }
    }

    /**
     * {@code running} with the new version's switch rules added (and its NIC rules when it runs on the same server:
     * the record names one server), written before the update installs anything.
     */
    private void recordUpdateIntent(ChainId id, InstalledState running, DeploymentPlan plan) {
        ChainFence.check("recording the rules the update of chain " + id + " is about to install");
        List<InstalledRule> rules = new ArrayList<>(running.switchRules());
        Set<Object> held = Deployer.entries(running.switchRules()); // an entry both versions use is named once
        plan.allSwitchRules().stream().filter(r -> !held.contains(Deployer.entry(r.rule()))).forEach(rules::add);
        List<Long> nicRules = new ArrayList<>(running.nicRuleIds());
        if (plan.server().map(MetronServer::id).equals(running.server())) {
            plan.nicRules().forEach(r -> nicRules.add(r.getId()));
        }
        store.installed().put(id, new InstalledState(id, running.server(), rules, nicRules, running.pipeline(),
                running.unread(), running.unreadWhy()));
    }

    /** Writes a bring-up's record before its deployment commits; a deposed instance's write is refused. */
    private void recordIntent(ChainId id, InstalledState intent, Optional<Deployer.ServerStart> started) {
        try {
            ChainFence.check("recording the rules chain " + id + " is about to install");
        } catch (MetronException e) {
            started.ifPresent(Deployer.ServerStart::abandon);
            throw e;
        }
        store.installed().put(id, intent);
    }

    /**
     * Readies {@code chain}'s move off its lost server {@code from} while the failover deadline runs: chooses a
     * server with {@code pe} (which leaves {@code from} out), claims tags, has {@code reserve} record the move (under
     * the reservation lock, before the spare's agent is asked for anything: its cores are then held for every
     * instance, and a next owner finds what to take back), starts the NIC rules and pipeline on the spare's agent
     * and plans the switch rules, installing none: traffic still goes where the chain is placed ({@code was}). Caller
     * holds the chain's lock.
     *
     * @throws MetronException when no server can take the chain or the spare's agent refused it (nothing is left:
     *                         tags released, the agent's part undone; {@code reserve}'s record is the caller's)
     */
    PreparedMove prepareMove(Chain chain, ChainCompiler compiler, PlacementEngine pe, Placement was, DeviceId from,
                             Consumer<PreparedMoveRecord> reserve) {
        ChainId id = chain.id();
        Deployment d = chain.deployment();
        long t0 = System.nanoTime();
        ServerChoice sc;
        OffloadChoice oc;
        Placement p;
        List<Tag> claimed;
        List<NicRule> nicRules;
        PreparedMoveRecord record;
        synchronized (store.reservationLock()) {
            sc = pe.chooseServer(id, d, d.cpuCores(), this::reservedCores, compiler.flowStateDemand());
            oc = pe.chooseOffload(id, ingress(d), sc.server().attachment(sc.nic()).get(), compiler);
            ingress.require(id, d, chain.json(), oc);
            List<String> groupIds = oc.compiled().groups().stream().map(ChainBringUp::groupId)
                    .collect(Collectors.toList());
            boolean markerOnly = groupIds.isEmpty();
            claimed = tags.allocate(sc.server().id(), sc.nic(), d.tagType(), id,
                    markerOnly ? List.of(TagAllocation.EGRESS_GROUP) : groupIds, sc.tagsInUse());
            p = placementOf(id, sc, oc, markerOnly ? List.of() : claimed);
            nicRules = sc.nicRules() ? AgentRequests.nicRules(id, p) : List.of();
            record = new PreparedMoveRecord(id, from, p, claimed, nicRules.stream().map(NicRule::getId)
                    .collect(Collectors.toList()));
            try {
                reserve.accept(record);
            } catch (RuntimeException e) {
                tags.release(id, claimed); // not recorded (the store did not answer): nothing of it is left
                throw e;
            }
        }
        long tChosen = System.nanoTime();
        Deployer.ServerStart started = deployer.start(id, sc.server(), nicRules, AgentRequests.pipeline(id, p,
                oc.compiled(), claimed.get(0)));
        try {
            DeploymentPlan plan = planner.plan(id, d, p, Optional.of(sc.server()), sc.nicRules(), oc, claimed.get(0));
            // the switch rules the move will commit, recorded while the deadline runs: a next owner takes back what
            // an owner that stopped after committing them (before recording the move) left on the switches
            record = record.withSwitchRules(plan.allSwitchRules());
            reserve.accept(record);
            boolean running = started.ready();
            long took = ms(t0, System.nanoTime());
            log.info("Chain {} prepared on {} cores {} in {} ms for its move off lost server {} (chosen and tags "
                    + "claimed {} ms, then pipeline {} and {} switch rules planned {} ms)", id, sc.server().id(),
                    p.cores(), took, from, ms(t0, tChosen), running ? "running" : "starting", plan.ruleCount(),
                    ms(tChosen, System.nanoTime()));
            return new PreparedMove(record, was, oc, plan, started, compiler, took);
        } catch (RuntimeException e) {
            List<String> left = started.abandon();
            tags.release(id, claimed);
            if (!left.isEmpty()) {
                log.warn("Chain {}: a failed preparation on {} left {}", id, sc.server().id(), left);
            }
            throw e instanceof MetronException ? e : new MetronException(Fault.INTERNAL, "chain " + id
                    + ": preparing its move off " + from + ": " + e, e);
        }
    }

    static long ms(long from, long to) {
        return (to - from) / 1_000_000;
    }

    /**
     * Places and deploys {@code next} beside the running {@code old}, moves traffic and state to it and removes
     * the old version ({@link MakeBeforeBreak}). Caller holds the chain's lock.
     *
     * @throws MetronException when the new version cannot be placed or deployed; nothing of it is left
     */
    Chain bringUpBeside(Chain old, Chain next, ChainCompiler compiler, InstalledState running,
                         Placement oldPlacement) {
        return bringUpBeside(old, next, compiler, running, oldPlacement, Optional.empty(), "");
    }

    /**
     * As {@link #bringUpBeside(Chain, Chain, ChainCompiler, InstalledState, Placement)}, the new version on server
     * {@code to} when given (else the running version's server when it can take it, else another); a non-empty
     * {@code move} says why the chain moves (the same definition, docs/failover.md#planned-restart-drain) and
     * begins the chain's reason instead of "updated from version N".
     */
    Chain bringUpBeside(Chain old, Chain next, ChainCompiler compiler, InstalledState running,
                        Placement oldPlacement, Optional<MetronServer> to, String move) {
        ChainId id = next.id();
        Deployment d = next.deployment();
        long t0 = System.nanoTime();
        CompiledChain oldCompiled = compilers.compiled(old, Optional.of(oldPlacement));
        Optional<MetronServer> oldServer = running.server().flatMap(servers::server);
        ServerChoice sc;
        OffloadChoice oc;
        Placement p;
        List<Tag> claimed;
        synchronized (store.reservationLock()) {
            ingress.requireEarly(id, d, next.json(), compiler);
            Optional<OffloadChoice> full = placement.chooseFullOffload(id, ingress(d), egress(d),
                    compiler);
            sc = full.isPresent() ? null : to.isPresent() ? placement.chooseServerAt(id, d, d.cpuCores(),
                    server -> reservedCoresExcept(server, id), compiler.flowStateDemand(), to.get())
                    : placement.chooseServerForUpdate(id, d, d.cpuCores(),
                    server -> reservedCoresExcept(server, id), compiler.flowStateDemand(), oldServer);
            oc = full.isPresent() ? full.get()
                    : placement.chooseOffload(id, ingress(d), sc.server().attachment(sc.nic()).get(), compiler);
            ingress.require(id, d, next.json(), oc);
            String version = AgentRequests.VERSION_MARK + "v" + next.version();
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
                    : AgentRequests.pipeline(id, oldPlacement, oldCompiled, oldPlacement.groups().get(0).tag());
            // the chain's record names the new version's rules too before any of it is installed (its NIC rules,
            // on the same server, included): an owner that stops half-way leaves them known to the next owner, which
            // removes them with the chain; the running record comes back if the update is undone
            recordUpdateIntent(id, running, plan);
            MakeBeforeBreak.Result r;
            try {
                r = new MakeBeforeBreak(deployer).run(id, new MakeBeforeBreak.Running(teardown.withoutShared(running),
                        oldServer, oldPipeline), plan, carry);
            } catch (MetronException e) {
                if (e.fault() != Fault.NOT_LEADER) {
                    store.installed().put(id, running);
                }
                throw e;
            }
            // the new version carries the traffic: the store says so, the old version's tags go
            store.installed().put(id, r.installed);
            store.placements().put(id, p);
            store.backups().put(id, new BackupConfiguration(id, oc.backups(), oc.backupProfiles()));
            compilers.placed(next, compiler, oc.compiled());
            List<Tag> oldTags = tags.allocations().stream().filter(t -> t.chainId().equals(id))
                    .map(TagAllocation::tag).filter(t -> !claimed.contains(t)).collect(Collectors.toList());
            tags.release(id, oldTags);
            String reason = (move.isEmpty() ? "updated from version " + old.version() : move + ": from "
                    + oldServer.map(MetronServer::id).map(Object::toString).orElse("no server") + " to "
                    + (sc == null ? "no server" : sc.server().id())) + " make-before-break in "
                    + ms(t0, System.nanoTime()) + " ms: " + r.carried + " flows carried over"
                    + (carry.sources().isEmpty() ? " (no unchanged stateful element)" : " " + carry)
                    + ", " + r.synced + " synced after the move"
                    + (r.unfollowed.isEmpty() ? "" : "; on another core, not followed until the move (a flow they"
                    + " mapped after the copy may get a new mapping): " + r.unfollowed)
                    + (r.left.isEmpty() ? "" : "; not removed of the old version: " + r.left);
            Chain done = next.withState(ChainState.ACTIVE, reason);
            store.chains().put(id, done);
            reroutes.backups().refresh(id);
            log.info("Chain {} {}", id, reason);
            return done;
        } catch (RuntimeException e) {
            if (e instanceof MetronException && ((MetronException) e).fault() == Fault.NOT_LEADER) {
                // another instance owns the chain now and may hold these tags for the same groups: its update
                // releases the chain's tags it does not use
                throw e;
            }
            tags.release(id, claimed);
            if (e instanceof MetronException) {
                throw e;
            }
            throw new MetronException(Fault.INTERNAL, "chain " + id + " update: " + e, e);
        }
    }

    /** Where {@code json} would be placed now, reserving nothing ({@link MetronService#validate}). */
    ValidationReport validate(String json) {
        ParsedChain pc = ChainRequests.parse(json);
        ChainCompiler compiler = new ChainCompiler(pc.spec(), synthesis);
        CompiledChain base = compiler.apply(TargetProfile.NONE);
        try {
            Deployment d = pc.deployment();
            Optional<OffloadChoice> full = placement.chooseFullOffload(pc.id(), ingress(d), egress(d),
                    compiler);
            ServerChoice sc = full.isPresent() ? null
                    : placement.chooseServer(pc.id(), d, d.cpuCores(), this::reservedCores,
                            compiler.flowStateDemand());
            OffloadChoice oc = full.isPresent() ? full.get() : placement.chooseOffload(pc.id(), ingress(d),
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
        Set<Integer> out = new HashSet<>(held.apply(server, chain));
        store.placements().snapshot().values().stream().filter(p -> p.server().map(server::equals).orElse(false))
                .filter(p -> !p.chainId().equals(chain)).forEach(p -> out.addAll(p.cores()));
        return out;
    }
}
