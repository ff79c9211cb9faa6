package org.metron.app.scaling;

import org.metron.agent.v1.Core;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.ServerResources;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.impl.AgentCalls;
import org.metron.app.impl.ChainFence;
import org.metron.app.impl.CompiledChains;
import org.metron.app.impl.FencedSwitches;
import org.metron.app.impl.ReadiedCores;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.impl.TagAllocator;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingEvent.Outcome;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.store.TagKey;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import static org.metron.app.scaling.OperationPlans.finalInstalled;
import static org.metron.app.scaling.OperationPlans.retagged;

/**
 * Runs the scaling operations (split, merge, scale-out, merge back, recovery): owns what all of them share — the
 * journal ({@link ScalingStore#operations()}) each step is recorded in before it is taken, the per-chain lock
 * ({@link ChainStore#lockFor}), the agent and switch calls with their deadline and error mapping
 * ({@link AgentCalls}), the step order prepare / switch (the re-tag) / sync / commit with rollback before the
 * re-tag ({@link #run}), and the history entry of each outcome. The operations ({@link SplitOperation},
 * {@link ScaleOut}, {@link MergeOperation}, {@link LostServerMerge}, {@link JournalRecovery}) decide what changes.
 */
final class OperationRunner {
    private static final Logger log = LoggerFactory.getLogger(OperationRunner.class);
    /** How long a retired group may keep receiving frames already tagged for it before it goes. */
    private static final long DRAIN_MAX_MS = 500;
    private static final long DRAIN_POLL_MS = 20;

    final ChainStore store;
    final ScalingStore journal;
    final ServerRegistry servers;
    final SwitchProgrammer switches;
    final CompiledChains compiled;
    /** The application id the chain's rules were installed with (rule ids depend on it). */
    final ApplicationId app;
    /** Every agent and switch call: the step timeout, the build deadline, errors as MetronException. */
    final AgentCalls calls;
    final LongSupplier clock;
    final TagAllocator tags;
    /** The servers' resources as last read in the background (the load monitor refreshes them). */
    final ResourceCache resources;
    /** Plans the rules to another server; null: no scale-out (docs/scaling.md#scale-out). */
    private final RulePlanner planner;

    /** Who owns each chain: an operation's writes are fenced by the term it started with ({@link ChainFence}). */
    private final Leadership leadership;

    OperationRunner(ChainStore store, ScalingStore journal, ServerRegistry servers, SwitchProgrammer switches,
                    CompiledChains compiled, ApplicationId app, Duration timeout, LongSupplier clock,
                    RulePlanner planner, Leadership leadership) {
        this.store = Objects.requireNonNull(store);
        this.journal = Objects.requireNonNull(journal);
        this.servers = Objects.requireNonNull(servers);
        this.switches = FencedSwitches.of(switches);
        this.leadership = Objects.requireNonNull(leadership);
        this.compiled = Objects.requireNonNull(compiled);
        this.app = Objects.requireNonNull(app);
        this.calls = new AgentCalls(timeout);
        this.clock = Objects.requireNonNull(clock);
        this.planner = planner;
        this.tags = new TagAllocator(store.tags());
        this.resources = new ResourceCache(clock);
    }

    /** Whether this controller scales out (it was given a rule planner). */
    boolean scalesOut() {
        return planner != null;
    }

    /**
     * The steps of one kind of operation (a split or merge on the chain's server: {@link LocalSteps}; a scale-out
     * or merge back: {@link RemoteSteps}), which {@link #run} takes in the order of docs/scaling.md#steps.
     */
    interface Steps {
        /**
         * Step PIPELINE: everything before the re-tag (agent pipeline, NIC rule, state copy, transit rules);
         * nothing carries the operation's tag yet.
         *
         * @return whether the transit rules were installed (else the switch step installs them)
         */
        boolean prepare(ScalingOperation op, StepTimer timer);

        /** Step SYNCED: the flows created between the first state copy and the re-tag. */
        void sync(ScalingOperation op, StepTimer timer);

        /** A merge's release of the retired group on its agent, once synced; adds what was left to problems. */
        void release(ScalingOperation op, List<String> problems);

        /** Undoes the operation before its re-tag; answers what could not be undone. */
        List<String> rollback(ScalingOperation op);
    }

    /**
     * Runs an operation from its recorded step to the end: prepare, then the offload device's re-tag as one batch
     * (the point of no return: the barrier is the switch programmer's confirmation, SwitchProgrammer#install),
     * then the superseded rules, the reply batch, the sync and the commit. A failure before the re-tag rolls
     * everything back; after it, the operation is completed and what went wrong is named in its entry.
     * Each step is recorded in the journal before the next is taken, so {@link JournalRecovery} resumes it.
     *
     * @param timer the operation's step times so far
     */
    ScalingEvent run(ScalingOperation op, Steps steps, StepTimer timer) {
        try {
            boolean transitInstalled = false;
            if (op.step().compareTo(Step.SWITCHED) < 0) {
                transitInstalled = steps.prepare(op, timer);
                op = record(op, Step.SWITCHED);
            }
            if (op.step() == Step.SWITCHED) {
                // Idempotent, so a recovery that finds this step recorded simply does it again (transit rules too).
                if (!transitInstalled) {
                    installByDevice(op.transitAdded());
                }
                installByDevice(retagged(op, Role.OFFLOAD));
                timer.lap("switch");
            }
        } catch (MetronException e) {
            List<String> left = steps.rollback(op);
            Outcome outcome = left.isEmpty() ? Outcome.ROLLED_BACK : Outcome.FAILED;
            String detail = e.getMessage() + (left.isEmpty() ? " (rolled back)" : " (rollback incomplete: " + left
                    + ")");
            timer.lap("rollback");
            // the operator's answer names what is left; the journal entry goes (a live owner does not retry)
            finish(event(op, outcome, detail, op.before(), timer.toString()));
            throw new MetronException(e.fault(), detail, e);
        }
        // From here the switch sends the moved classes to their new group: only forward.
        List<String> problems = new ArrayList<>();
        boolean repliesRetagged = true;
        if (op.step() == Step.SWITCHED) {
            if (!op.superseded().isEmpty()) {
                // the rules the new ones divide or join: until they go, a packet may match either at the same
                // priority, and both tag it for a group that holds its flow's state (docs/scaling.md#class-split)
                problems.addAll(removeByDevice(op.superseded()));
                timer.lap("superseded");
            }
            repliesRetagged = retagReplies(op, problems, timer);
            try {
                steps.sync(op, timer);
            } catch (MetronException e) {
                problems.add(e.getMessage());
            }
            op = record(op, Step.SYNCED);
        }
        if (op.kind() == Kind.MERGE) {
            problems.addAll(removeByDevice(op.transitRemoved()));
            steps.release(op, problems);
            store.tags().remove(new TagKey(op.otherTag()));
        }
        return committed(op, repliesRetagged, problems, timer);
    }

    /** {@link #run} of a split or merge on the chain's own server. */
    ScalingEvent runLocal(ScalingOperation op, MetronServer server, StepTimer timer) {
        return run(op, new LocalSteps(this, server.agent(), compiled.compiled(op.chain())), timer);
    }

    /**
     * {@link #run} of a scale-out or its merge back.
     *
     * @param far the other server's agent; null for a merge back from a lost server ({@link LostServerMerge}):
     *            nothing is asked of it, its flows are not copied and its pipeline and NIC rule are left
     */
    ScalingEvent runRemote(ScalingOperation op, MetronServer home, AgentClient far, StepTimer timer) {
        return run(op, new RemoteSteps(this, home.agent(), far, op), timer);
    }

    /**
     * The reply batch, right after the forward batch (docs/scaling.md#replies): until it is confirmed, replies of the
     * moved classes reach the old group, which still holds every mapping made before the operation.
     *
     * @return false when the batch failed (listed in {@code problems}): the switch still holds the old reply rules
     *         (the batch is atomic), and the store is to say so
     */
    boolean retagReplies(ScalingOperation op, List<String> problems, StepTimer timer) {
        List<InstalledRule> replyRules = retagged(op, Role.REPLY);
        if (replyRules.isEmpty()) {
            return true;
        }
        try {
            installByDevice(replyRules);
            timer.lap("replies");
            return true;
        } catch (MetronException e) {
            problems.add("reply rules of classes " + op.moved() + " still tag them for "
                    + (op.kind() == Kind.SPLIT ? op.group() : op.other()) + ": " + e.getMessage());
            return false;
        }
    }

    /** Commits an operation that went past its re-tag and records its DONE entry, with what went wrong after. */
    ScalingEvent committed(ScalingOperation op, boolean repliesRetagged, List<String> problems,
                                   StepTimer timer) {
        commit(op, repliesRetagged);
        timer.lap("commit");
        return finish(event(op, Outcome.DONE, problems.isEmpty() ? "" : "completed with problems: " + problems,
                op.after(), timer.toString()));
    }

    /**
     * Ends a journalled operation: its history entry first, then its journal entry. In that order an observer
     * never sees an operation neither in progress nor in the history (the 3-node cluster test read an empty
     * history just after the journal entry went), and an owner dying between the two leaves an entry
     * {@link JournalRecovery} recognises ({@link #recorded}) and only removes.
     */
    ScalingEvent finish(ScalingEvent ev) {
        journal.record(ev);
        journal.operations().remove(ev.chain());
        return ev;
    }

    /** Whether the chain's history already holds the entry of {@code op} (same kind, groups and start). */
    boolean recorded(ScalingOperation op) {
        return journal.history(op.chain()).stream().anyMatch(e -> e.kind() == op.kind()
                && e.groups().equals(List.of(op.group(), op.other())) && e.atMs() - e.durationMs() == op.startMs());
    }

    /** @param repliesRetagged false when the reply batch failed: the installed rules keep the old reply rules */
    void commit(ScalingOperation op, boolean repliesRetagged) {
        Optional<Versioned<Placement>> p = store.placements().get(op.chain());
        if (op.kind() == Kind.MERGE && p.isPresent()) {
            store.placements().replace(op.chain(), p.get().version(), op.after());
        }
        Optional<Versioned<InstalledState>> inst = store.installed().get(op.chain());
        if (inst.isPresent()) {
            store.installed().replace(op.chain(), inst.get().version(), finalInstalled(op, repliesRetagged));
        }
        // every split, merge and scale-out ends here: the backups computed for the old rules no longer fit
        compiled.rulesChanged(op.chain());
    }

    /** A split's tag released (if still its own) and the placement put back (if still the split's). */
    void releaseSplit(ScalingOperation op) {
        Optional<Versioned<TagAllocation>> t = store.tags().get(new TagKey(op.otherTag()));
        if (t.isPresent() && t.get().value().chainId().equals(op.chain())
                && t.get().value().groupId().equals(op.other())) {
            store.tags().remove(new TagKey(op.otherTag()));
        }
        store.placements().get(op.chain()).filter(v -> v.value().equals(op.after()))
                .ifPresent(v -> store.placements().replace(op.chain(), v.version(), op.before()));
    }

    /** The installed rules as before the operation (its journal entry goes with its history entry: finish). */
    void restoreInstalled(ScalingOperation op) {
        store.installed().get(op.chain())
                .ifPresent(v -> store.installed().replace(op.chain(), v.version(), op.installedBefore()));
    }

    /** Waits until the retired group has stopped receiving frames (its packet counter holds still). */
    void drain(AgentClient agent, ScalingOperation op) {
        long end = clock.getAsLong() + DRAIN_MAX_MS;
        long last = -1;
        while (clock.getAsLong() < end) {
            long n = calls.await(agent.getStats(op.chain().name()), "reading stats of " + op.chain()).getGroupsList()
                    .stream().filter(g -> g.getGroupId().equals(op.other())).mapToLong(GroupStats::getPackets)
                    .findFirst().orElse(-1);
            if (n == last) {
                return;
            }
            last = n;
            try {
                Thread.sleep(DRAIN_POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The chain's monitor, shared with its lifecycle operations and recovery ({@link ChainStore#lockFor}). */
    Object lock(ChainId id) {
        return store.lockFor(id);
    }

    /** Starts an operation of the chain on this thread, taken with its lock ({@link ChainFence#begin}). */
    ChainFence.Op fence(ChainId id) {
        return ChainFence.begin(leadership, store.terms(), id);
    }

    Ctx context(ChainId id) {
        Chain chain = store.chains().get(id).map(Versioned::value).orElseThrow(() ->
                new MetronException(Fault.UNKNOWN_CHAIN, "no chain named '" + id + "'"));
        if (chain.state() != ChainState.ACTIVE) {
            throw new MetronException(Fault.INVALID_CHAIN, "chain " + id + " is " + chain.state()
                    + "; only ACTIVE chains scale");
        }
        if (journal.operations().get(id).isPresent()) {
            throw new MetronException(Fault.INVALID_CHAIN, "chain " + id + " has a scaling operation in progress: "
                    + journal.operations().get(id).get().value());
        }
        Versioned<Placement> p = store.placements().get(id).orElseThrow(() ->
                new MetronException(Fault.INTERNAL, "chain " + id + " is ACTIVE but has no placement"));
        Versioned<InstalledState> inst = store.installed().get(id).orElseThrow(() ->
                new MetronException(Fault.INTERNAL, "chain " + id + " is ACTIVE but has no installed rules"));
        DeviceId sid = p.value().server().orElseThrow(() -> new MetronException(Fault.INVALID_CHAIN,
                "chain " + id + " is fully offloaded: it has no groups to scale"));
        MetronServer server = servers.server(sid).orElseThrow(() -> new MetronException(Fault.AGENT_FAILURE,
                "server " + sid + " of chain " + id + " is not registered"));
        return new Ctx(chain, p, inst, server, compiled.compiled(id));
    }

    /** Records a refusal (nothing was changed) and answers the exception to throw. */
    MetronException refuse(ChainId chain, Kind kind, List<String> groups, String reason, long onsetMs,
                                   long start, String why) {
        long now = clock.getAsLong();
        Placement p = store.placements().get(chain).map(Versioned::value).orElse(null);
        List<Integer> cores = p == null ? List.of() : p.cores();
        List<String> g = new ArrayList<>(groups);
        while (g.size() < 2) {
            g.add("");
        }
        journal.record(new ScalingEvent(now, chain, kind, g, cores, cores, List.of(), reason, Outcome.FAILED, why,
                now - onsetMs, now - start, ""));
        return new MetronException(Fault.IMPOSSIBLE_PLACEMENT, why);
    }

    ScalingOperation record(ScalingOperation op, Step next) {
        ScalingOperation n = op.at(next);
        journal.operations().put(op.chain(), n);
        return n;
    }

    ScalingEvent event(ScalingOperation op, Outcome outcome, String detail, Placement result,
                               String steps) {
        long now = clock.getAsLong();
        List<String> groups = List.of(op.group(), op.other());
        return new ScalingEvent(now, op.chain(), op.kind(), groups, op.before().cores(), result.cores(), op.moved(),
                op.reason(), outcome, detail, now - op.onsetMs(), now - op.startMs(), steps, op.slice());
    }

    void installByDevice(List<InstalledRule> rules) {
        for (Map.Entry<DeviceId, List<FlowRule>> e : byDevice(rules).entrySet()) {
            calls.await(switches.install(e.getKey(), e.getValue()), Fault.SWITCH_FAILURE, "installing "
                    + e.getValue().size() + " rules on " + e.getKey());
        }
    }

    List<String> removeByDevice(List<InstalledRule> rules) {
        List<String> left = new ArrayList<>();
        for (Map.Entry<DeviceId, List<FlowRule>> e : byDevice(rules).entrySet()) {
            try {
                calls.await(switches.remove(e.getKey(), e.getValue()), Fault.SWITCH_FAILURE, "removing "
                        + e.getValue().size() + " rules from " + e.getKey());
            } catch (MetronException ex) {
                left.add(ex.getMessage());
            }
        }
        return left;
    }

    static Map<DeviceId, List<FlowRule>> byDevice(List<InstalledRule> rules) {
        Map<DeviceId, List<FlowRule>> out = new LinkedHashMap<>();
        rules.forEach(r -> out.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r.rule()));
        return out;
    }

    MetronServer remoteServer(GroupAssignment g) {
        DeviceId id = g.server().orElseThrow();
        return servers.server(id).orElseThrow(() -> new MetronException(Fault.AGENT_FAILURE, "server " + id
                + " of group " + g.groupId() + " is not registered"));
    }

    RulePlanner planner() {
        if (planner == null) {
            throw new MetronException(Fault.INTERNAL, "this controller was started without scale-out");
        }
        return planner;
    }

    /**
     * A server's resources to choose a free core from: the cached report when it shows one, else the agent's answer
     * now. A report up to {@link ResourceCache#MAX_AGE_MS} old still shows a pipeline an operation has just removed
     * (a merge back, a move off): a scale-out at rate right after a merge back was refused with the other server's
     * only core free ("no free core on metron:srv1 ... and none on servers [metron:srv2]", the moves bench and
     * test_fastmoves_e2e, 1 run in 2 to 1 in 8).
     */
    ServerResources resourcesToPlace(MetronServer s) {
        Optional<ServerResources> cached = resources.fresh(s.id());
        if (cached.isPresent() && !freeCores(s.id(), cached.get()).isEmpty()) {
            return cached.get();
        }
        return calls.await(s.agent().getResources(), "reading resources of " + s.agent().target());
    }

    /**
     * Lowest core the agent of {@code server} offers that no placement holds, -1 when none (caller holds the
     * reservation lock).
     */
    int freeCore(DeviceId server, ServerResources res) {
        List<Integer> free = freeCores(server, res);
        return free.isEmpty() ? -1 : free.get(0);
    }

    /** Cores the agent of {@code server} offers that no placement or operation holds, lowest first. */
    List<Integer> freeCores(DeviceId server, ServerResources res) {
        return freeCores(server, res, store.placements().snapshot().values(), journal.inProgress());
    }

    /** {@link #freeCores(DeviceId, ServerResources)} against placements and operations the caller read. */
    static List<Integer> freeCores(DeviceId server, ServerResources res, Collection<Placement> placements,
                                   Collection<ScalingOperation> operations) {
        return freeCores(server, res, placements, operations, Set.of());
    }

    /**
     * As {@link #freeCores(DeviceId, ServerResources, Collection, Collection)}, counting {@code readied} free too
     * (cores failover moves readied there hold, running their pipelines: reclaimable, {@link ReadiedCores}).
     */
    static List<Integer> freeCores(DeviceId server, ServerResources res, Collection<Placement> placements,
                                   Collection<ScalingOperation> operations, Set<Integer> readied) {
        Set<Integer> taken = new HashSet<>();
        placements.forEach(p -> taken.addAll(p.coresOn(server)));
        operations.forEach(op -> {
            if (op.kind() == Kind.SPLIT) {
                taken.addAll(op.after().coresOn(server));
            }
        });
        return res.getCoresList().stream().filter(Core::getAvailable)
                .filter(k -> (k.getPipelineId().isEmpty() || readied.contains(k.getId())) && !taken.contains(k.getId()))
                .map(Core::getId).sorted().collect(Collectors.toList());
    }

    /**
     * Rules tagging {@code classes} with {@code from}, rewritten to tag them with {@code to}: the offload rules
     * (forward traffic), then the reply rules (replies, where they enter). The forward ones come first: the
     * switch step installs them as the point of no return and the reply rules right after (docs/scaling.md).
     */
    List<InstalledRule> retag(InstalledState installed, Tag from, Tag to, Set<Integer> classes) {
        List<InstalledRule> out = new ArrayList<>();
        for (Role role : List.of(Role.OFFLOAD, Role.REPLY)) {
            for (InstalledRule r : installed.switchRules()) {
                if (r.role() != role) {
                    continue;
                }
                Optional<Integer> cls = RuleRetagger.taggedClass(r.rule(), from);
                if (cls.isPresent() && classes.contains(cls.get())) {
                    out.add(new InstalledRule(role, RuleRetagger.retagOffload(r.rule(), cls.get(), to, app)));
                }
            }
        }
        return out;
    }
}
