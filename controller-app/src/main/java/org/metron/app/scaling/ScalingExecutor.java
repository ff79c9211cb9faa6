package org.metron.app.scaling;

import org.metron.agent.v1.Core;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.StepTime;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TagType;
import org.metron.app.impl.CompiledChains;
import org.metron.app.impl.AgentCalls;
import org.metron.app.impl.ReplyTraffic;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.TagAllocator;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingEvent.Outcome;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.store.TagKey;
import org.metron.drivers.agent.AgentClient;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Carries out splits and merges hitlessly, in the step order of docs/scaling.md#steps, recording each step in
 * the journal ({@link ScalingStore#operations()}) before taking it. A failure before the switch re-tag rolls
 * everything back; from the re-tag on, the operation is completed (the switch already sends the moved classes
 * to their new tag). {@link #recover()} does the same for operations a previous controller left unfinished.
 *
 * <p>Concurrency: one operation per chain at a time, on the same per-chain monitor as the chain's lifecycle
 * operations and recovery ({@link ChainStore#lockFor}); chains proceed in parallel except for the short core/tag
 * reservation, shared with placement ({@link ChainStore#reservationLock}). Store writes of the chain's placement and rules are compare-and-swap, so an
 * operator's remove/update that ran meanwhile is never overwritten.
 */
public final class ScalingExecutor {
    private static final Logger log = LoggerFactory.getLogger(ScalingExecutor.class);
    /** How long a retired group may keep receiving frames already tagged for it before it goes. */
    private static final long DRAIN_MAX_MS = 500;
    private static final long DRAIN_POLL_MS = 20;

    private final ChainStore store;
    private final ScalingStore journal;
    private final ServerRegistry servers;
    private final SwitchProgrammer switches;
    private final CompiledChains compiled;
    private final ApplicationId app;
    private final AgentCalls calls;
    private final LongSupplier clock;
    private final TagAllocator tags;
    private final ResourceCache resources;
    /** Plans the rules to another server; null: no scale-out (docs/scaling.md#scale-out). */
    private final RulePlanner planner;
    private final java.util.Random random;

    /**
     * @param compiled the chains' compiled form (the chain manager's: one cache)
     * @param app     the application id the chain's rules were installed with (rule ids depend on it)
     * @param timeout per agent call and per switch batch
     * @param clock   wall-clock milliseconds
     */
    public ScalingExecutor(ChainStore store, ScalingStore journal, ServerRegistry servers, SwitchProgrammer switches,
                           CompiledChains compiled, ApplicationId app, Duration timeout, LongSupplier clock) {
        this(store, journal, servers, switches, compiled, app, timeout, clock, null, new java.util.Random());
    }

    /**
     * @param planner plans the transit and return rules of a group placed on another server: with it, a split
     *                that finds no free core on the chain's server scales out (docs/scaling.md#scale-out)
     * @param random  draws the two servers of the two-choices placement
     */
    public ScalingExecutor(ChainStore store, ScalingStore journal, ServerRegistry servers, SwitchProgrammer switches,
                           CompiledChains compiled, ApplicationId app, Duration timeout, LongSupplier clock,
                           RulePlanner planner, java.util.Random random) {
        this.planner = planner;
        this.random = Objects.requireNonNull(random);
        this.store = Objects.requireNonNull(store);
        this.journal = Objects.requireNonNull(journal);
        this.servers = Objects.requireNonNull(servers);
        this.switches = Objects.requireNonNull(switches);
        this.compiled = Objects.requireNonNull(compiled);
        this.app = Objects.requireNonNull(app);
        this.calls = new AgentCalls(timeout);
        this.clock = Objects.requireNonNull(clock);
        this.tags = new TagAllocator(store.tags());
        this.resources = new ResourceCache(clock);
    }

    /** The servers' resources as last read in the background (the load monitor refreshes them). */
    ResourceCache resources() {
        return resources;
    }

    /**
     * Cores free on {@code chain}'s server for a split and on the servers it could scale out to, from the
     * resources last read in the background (the policy's view, docs/scaling.md#scale-out): {here, elsewhere};
     * here is -1 when the chain's server's resources are not at hand; elsewhere is 0 without scale-out.
     */
    int[] freeCores(Placement p) {
        DeviceId home = p.server().orElse(null);
        if (home == null) {
            return new int[]{-1, 0};
        }
        int here = resources.fresh(home).map(r -> freeCores(home, r).size()).orElse(-1);
        int elsewhere = planner == null ? 0 : servers.servers().stream()
                .filter(s -> !s.id().equals(home) && !s.attachments().isEmpty())
                .mapToInt(s -> resources.fresh(s.id()).map(r -> freeCores(s.id(), r).size()).orElse(0)).sum();
        return new int[]{here, elsewhere};
    }

    /** Carries out a policy decision. */
    public ScalingEvent execute(ScalingDecision d, Map<Integer, Double> classRates) {
        if (d.dividesClass()) {
            return splitClass(d.chain(), d.groups().get(0), d.classId(), d.bit(), d.reason(), d.onsetMs());
        }
        return d.kind() == Kind.SPLIT
                ? split(d.chain(), d.groups().get(0), classRates, d.reason(), d.onsetMs())
                : merge(d.chain(), d.groups().get(0), d.groups().get(1), d.reason(), d.onsetMs());
    }

    // ---- split -----------------------------------------------------------------------------------------------

    /**
     * Splits a group: the half of its classes with about half the measured rate moves to a new group with a
     * new tag and core, with a copy of the group's flow state. A reply class moves with the forward classes it
     * answers, and its reply rules are re-tagged with them (docs/scaling.md#replies).
     *
     * @param classRates measured packets/s per class (balances the halves)
     * @return the history entry (also recorded); DONE, or FAILED when nothing was changed
     * @throws MetronException when a step failed (the entry, ROLLED_BACK, is recorded before)
     */
    public ScalingEvent split(ChainId chainId, String groupId, Map<Integer, Double> classRates, String reason,
                              long onsetMs) {
        return splitting(chainId, groupId, onsetMs, (c, g, base, start, timer) -> {
            if (base.classifies()) {
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "group " + groupId
                        + " classifies unclassified traffic in software: its tag receives every such class, so "
                        + "it does not split");
            }
            if (g.classIds().size() < 2) {
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "group " + groupId
                        + " has one class " + g.classIds() + ": a single class cannot split");
            }
            ReplyTraffic replies = ReplyTraffic.of(c.compiled);
            List<List<Integer>> units = replies.units(g.classIds());
            if (units.size() < 2) {
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "group " + groupId
                        + " of chain " + chainId + " cannot split: its classes " + g.classIds() + " move only "
                        + "together, since a reply must reach the core holding its flow's mapping and "
                        + answering(replies, g.classIds()));
            }
            GroupSplitter.Halves halves = GroupSplitter.splitUnits(units, classRates);
            return reserveAndRun(c, g, base, reason, onsetMs, start, timer, (newId, tag, core) -> new SplitParts(
                    new GroupAssignment(groupId, g.tag(), g.core(), halves.keep(), slicesOf(g, halves.keep())),
                    new GroupAssignment(newId, tag, core, halves.move(), slicesOf(g, halves.move())),
                    retag(c.installed.value(), g.tag(), tag, Set.copyOf(halves.move())), List.of(), halves.move(),
                    ""));
        });
    }

    /** The body of a split, given the chain as read at its start. */
    private interface SplitBody {
        ScalingEvent run(Ctx c, GroupAssignment g, ClassGroup base, long start, StepTimer timer);
    }

    /** Runs a split of {@code groupId} under the chain's lock, timing from its onset. */
    private ScalingEvent splitting(ChainId chainId, String groupId, long onsetMs, SplitBody body) {
        synchronized (lock(chainId)) {
            long start = clock.getAsLong();
            StepTimer timer = new StepTimer();
            timer.add("detect", start - onsetMs);
            Ctx c = context(chainId);
            timer.lap("context");
            return body.run(c, c.group(groupId), base(c.compiled, groupId), start, timer);
        }
    }

    /**
     * Divides one class of a group by a bit of the L4 source port (docs/scaling.md#class-split): the group keeps
     * the class's packets with the bit clear, a new group (new tag and core) takes those with it set. Each of
     * the class's offload rules becomes two rules at its priority (disjoint halves of it, so first-match order
     * holds); the new group starts with the group's flows whose key has the bit set.
     *
     * @param bit 0 (least significant) .. 15; not one the class's slice or rules already fix
     * @return the history entry (also recorded)
     * @throws MetronException when refused (recorded as FAILED) or a step failed (ROLLED_BACK)
     */
    public ScalingEvent splitClass(ChainId chainId, String groupId, int cls, int bit, String reason, long onsetMs) {
        return splitting(chainId, groupId, onsetMs, (c, g, base, start, timer) -> {
            String refusal = classSplitRefusal(c, g, base, cls, bit);
            if (refusal != null) {
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, refusal);
            }
            ClassSlice have = g.slice(cls);
            ClassSlice keep = have.half(bit, false);
            ClassSlice move = have.half(bit, true);
            Map<Integer, ClassSlice> kept = new HashMap<>(g.slices());
            kept.put(cls, keep);
            List<InstalledRule> rules = classRules(c.installed.value(), g.tag(), cls);
            return reserveAndRun(c, g, base, reason, onsetMs, start, timer, (newId, tag, core) -> {
                List<InstalledRule> changed = new ArrayList<>();
                List<InstalledRule> superseded = new ArrayList<>();
                for (InstalledRule r : rules) {
                    Optional<ClassSlice> fixed = RuleRetagger.sportBits(r.rule());
                    if (fixed.isPresent() && !fixed.get().uses(bit)) {
                        // two halves at its priority, one per group
                        changed.add(new InstalledRule(Role.OFFLOAD, RuleRetagger.sliced(r.rule(), cls, bit, false,
                                g.tag(), app)));
                        changed.add(new InstalledRule(Role.OFFLOAD, RuleRetagger.sliced(r.rule(), cls, bit, true,
                                tag, app)));
                        superseded.add(r);
                    } else if (fixed.isPresent() && (fixed.get().value() >> bit & 1) != 0) {
                        // its packets all have the bit set (e.g. source port 0 is never): it moves whole
                        changed.add(new InstalledRule(Role.OFFLOAD, RuleRetagger.retagOffload(r.rule(), cls, tag, app)));
                    }
                    // else all its packets stay: the bit clear, or no source port (neither TCP nor UDP)
                }
                return new SplitParts(new GroupAssignment(groupId, g.tag(), g.core(), g.classIds(), kept),
                        new GroupAssignment(newId, tag, core, List.of(cls), Map.of(cls, move)), changed, superseded,
                        List.of(cls), String.format(Locale.ROOT, "class %d divided by source-port bit %d: %s keeps %s,"
                                + " %s takes %s", cls, bit, groupId, keep, newId, move));
            });
        });
    }

    /** Why a class of a group cannot be divided by {@code bit}; null when it can. */
    private String classSplitRefusal(Ctx c, GroupAssignment g, ClassGroup base, int cls, int bit) {
        String what = "class " + cls + " of group " + g.groupId() + " of chain " + c.placement.value().chainId();
        if (base.classifies()) {
            return "group " + g.groupId() + " classifies unclassified traffic in software: its tag receives every"
                    + " such class, so it does not split";
        }
        if (!g.classIds().contains(cls)) {
            return "group " + g.groupId() + " has no class " + cls + " (classes " + g.classesText() + ")";
        }
        if (bit < 0 || bit >= ClassSlice.BITS || g.slice(cls).uses(bit)) {
            return what + " (" + g.slice(cls) + ") cannot be divided by source-port bit " + bit;
        }
        ReplyTraffic replies = ReplyTraffic.of(c.compiled);
        if (replies.units(g.classIds()).stream().anyMatch(u -> u.contains(cls) && u.size() > 1)) {
            return what + " is answered by a reply class (" + answering(replies, g.classIds()) + "): replies carry"
                    + " the translated port, not the source port a slice is defined by, so it is not divided";
        }
        List<InstalledRule> rules = classRules(c.installed.value(), g.tag(), cls);
        if (rules.stream().noneMatch(r -> RuleRetagger.sportBits(r.rule()).map(f -> !f.uses(bit)).orElse(false))) {
            return what + " has no offload rule for " + g.groupId() + " whose packets source-port bit " + bit
                    + " divides (rules: " + rules.stream().map(r -> r.rule().selector().criteria().toString())
                    .collect(Collectors.joining("; ")) + ")";
        }
        return null;
    }

    /** The offload rules tagging class {@code cls} for {@code tag}. */
    private static List<InstalledRule> classRules(InstalledState installed, Tag tag, int cls) {
        return installed.switchRules().stream().filter(r -> r.role() == Role.OFFLOAD
                && RuleRetagger.taggedClass(r.rule(), tag).equals(Optional.of(cls))).collect(Collectors.toList());
    }

    /** The slices among {@code g}'s of the classes {@code classes}. */
    private static Map<Integer, ClassSlice> slicesOf(GroupAssignment g, List<Integer> classes) {
        Map<Integer, ClassSlice> out = new HashMap<>(g.slices());
        out.keySet().retainAll(classes);
        return out;
    }

    /** What a split changes, once its new group's id, tag and core are known. */
    private static final class SplitParts {
        final GroupAssignment keep;
        final GroupAssignment added;
        final List<InstalledRule> retagged;
        final List<InstalledRule> superseded;
        final List<Integer> moved;
        final String slice;

        SplitParts(GroupAssignment keep, GroupAssignment added, List<InstalledRule> retagged,
                   List<InstalledRule> superseded, List<Integer> moved, String slice) {
            this.keep = keep;
            this.added = added;
            this.retagged = retagged;
            this.superseded = superseded;
            this.moved = moved;
            this.slice = slice;
        }
    }

    /**
     * A split's parts with their port shares (docs/scaling.md#port-shares): the kept half keeps the group's, the
     * new half takes the lowest share no group of the chain holds on any server, so a flow it maps never gets a
     * port another group of the chain hands out, wherever that group runs.
     */
    private static SplitParts withPortShares(SplitParts p, GroupAssignment g, Placement before) {
        return new SplitParts(p.keep.withPortShare(g.portShare()),
                p.added.withPortShare(before.freePortShare(Set.of())), p.retagged, p.superseded, p.moved, p.slice);
    }

    /** Builds a split's parts for the new group's id, tag and core. */
    private interface SplitPlan {
        SplitParts parts(String newId, Tag tag, int core);
    }

    /**
     * Reserves a core and a tag for the new half of a split, journals the operation and writes the placement
     * (docs/scaling.md#steps, step 1), then runs it.
     */
    private ScalingEvent reserveAndRun(Ctx c, GroupAssignment g, ClassGroup base, String reason, long onsetMs,
                                       long start, StepTimer timer, SplitPlan plan) {
        ChainId chainId = c.placement.value().chainId();
        String groupId = g.groupId();
        String newId = childId(c.placement.value(), base);
        try {
            c.placement.value().freePortShare(Set.of());
        } catch (IllegalStateException e) {
            throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, e.getMessage()
                    + ": a new group would hand out ports another group of the chain does");
        }
        ScalingOperation op;
        SplitParts parts;
        synchronized (store.reservationLock()) {
            ServerResources res = resources.fresh(c.server.id()).orElseGet(() -> calls.await(
                    c.server.agent().getResources(), "reading resources of " + c.server.agent().target()));
            timer.lap("resources");
            int core = c.placement.value().cores().size() >= c.chain.deployment().maxCpuCores() ? -1
                    : freeCore(c.server.id(), res);
            if (core < 0 && planner != null) {
                return reserveRemote(c, g, reason, onsetMs, start, timer, plan, newId);
            }
            if (core < 0) {
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "no free core on "
                        + c.server.id() + " for a new group of chain " + chainId);
            }
            Tag tag;
            try {
                tag = tags.allocate(c.server.id(), c.placement.value().nic(), g.tag().type(), chainId,
                        List.of(newId), new HashSet<>(res.getTagsInUseList())).get(0);
            } catch (MetronException e) {
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, e.getMessage());
            }
            parts = withPortShares(plan.parts(newId, tag, core), g, c.placement.value());
            List<GroupAssignment> groups = new ArrayList<>();
            for (GroupAssignment x : c.placement.value().groups()) {
                if (x.groupId().equals(groupId)) {
                    groups.add(parts.keep);
                    groups.add(parts.added);
                } else {
                    groups.add(x);
                }
            }
            Placement after = withGroups(c.placement.value(), groups);
            InstalledState installed = c.installed.value();
            List<InstalledRule> transit = installed.switchRules().stream()
                    .filter(r -> r.role() == Role.TRANSIT && RuleRetagger.matchesGroup(r.rule(), g.tag()))
                    .map(r -> new InstalledRule(Role.TRANSIT, RuleRetagger.transitFor(r.rule(), tag, app)))
                    .collect(Collectors.toList());
            long nicRule = installed.nicRuleIds().isEmpty() ? 0 : RulePlanner.nicRuleId(chainId, newId);
            op = new ScalingOperation(Kind.SPLIT, chainId, Step.PIPELINE, groupId, newId, tag, core,
                    parts.moved, c.placement.value(), after, installed, parts.retagged, transit, List.of(), nicRule,
                    reason, onsetMs, start, parts.superseded, parts.slice);
            // write-ahead; from now on the new core counts as reserved for every other placement
            journal.operations().put(chainId, op);
            if (!store.placements().replace(chainId, c.placement.version(), after)) {
                journal.operations().remove(chainId);
                store.tags().remove(new TagKey(tag));
                throw refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start,
                        "chain " + chainId + " changed while the split was prepared");
            }
            timer.lap("reserve");
        }
        log.info("Splitting {} group {}: classes {} {} move to {} ({}, core {})", chainId, groupId, parts.moved,
                parts.slice, newId, op.otherTag(), op.otherCore());
        return run(op, c.server, timer);
    }

    /**
     * Step 1 of a scale-out (docs/scaling.md#scale-out): no core is free on the chain's server, so the new half
     * goes to another server reachable from the offload device — two servers drawn at random, the one with more
     * free cores wins (the placement's two choices) — with a tag of that server's NIC. The re-tagged offload
     * rules leave the offload device toward it; transit rules carry its tag there and return rules its output
     * to the egress point. A chain with a reply ingress: the re-tagged reply rules leave the egress point's device
     * toward it, transit rules carry its tag there from the egress point, return rules its restored replies to the
     * ingress point (docs/scaling.md#scale-out). Caller holds the reservation lock.
     */
    private ScalingEvent reserveRemote(Ctx c, GroupAssignment g, String reason, long onsetMs, long start,
                                       StepTimer timer, SplitPlan plan, String newId) {
        Placement before = c.placement.value();
        ChainId chainId = before.chainId();
        // a server already running a group of the chain takes another into the same pipeline
        List<MetronServer> candidates = servers.servers().stream()
                .filter(s -> !s.id().equals(c.server.id()) && !s.attachments().isEmpty())
                .collect(Collectors.toCollection(ArrayList::new));
        java.util.Collections.shuffle(candidates, random);
        MetronServer best = null;
        ServerResources bestRes = null;
        int bestFree = 0;
        for (MetronServer s : candidates.subList(0, Math.min(2, candidates.size()))) {
            try {
                ServerResources r = resources.fresh(s.id()).orElseGet(() -> calls.await(s.agent().getResources(),
                        "reading resources of " + s.agent().target()));
                int free = freeCores(s.id(), r).size();
                if (free > bestFree) {
                    best = s;
                    bestRes = r;
                    bestFree = free;
                }
            } catch (MetronException e) {
                log.warn("Scale-out of {}: server {} not considered: {}", chainId, s.id(), e.getMessage());
            }
        }
        timer.lap("servers");
        if (best == null) {
            throw refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start, "no free core on "
                    + c.server.id() + " for a new group of chain " + chainId + ", and none on "
                    + (candidates.isEmpty() ? "another server (none reachable that runs no group of it yet)"
                    : "servers " + candidates.stream().limit(2).map(MetronServer::id).collect(Collectors.toList())));
        }
        MetronServer remote = best;
        int core = freeCores(remote.id(), bestRes).get(0);
        String nic = nicOf(remote, before.nic());
        String egressNic = nicOf(remote, before.egressNic());
        Tag tag;
        try {
            tag = tags.allocate(remote.id(), nic, g.tag().type(), chainId, List.of(newId),
                    new HashSet<>(bestRes.getTagsInUseList())).get(0);
        } catch (MetronException e) {
            throw refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start, e.getMessage());
        }
        SplitParts parts = withPortShares(plan.parts(newId, tag, core), g, before);
        GroupAssignment moved = parts.added.onServer(remote.id(), nic, egressNic);
        List<InstalledRule> retagged;
        RulePlanner.RemotePath path;
        try {
            before.offloadDevice().orElseThrow(() -> new MetronException(Fault.IMPOSSIBLE_PLACEMENT,
                    "chain " + chainId + " has no offload device to re-tag at"));
            path = pathTo(c, remote, moved);
            // offload rules leave the offload device toward it, reply rules the egress point's device
            retagged = parts.retagged.stream().map(r -> RuleRetagger.taggedClass(r.rule(), tag).isPresent()
                    ? new InstalledRule(r.role(), RuleRetagger.withOutput(r.rule(), path.towardServer(r.role()), app))
                    : r).collect(Collectors.toList());
        } catch (MetronException e) {
            store.tags().remove(new TagKey(tag));
            throw refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start, e.getMessage());
        }
        List<GroupAssignment> groups = new ArrayList<>();
        for (GroupAssignment x : before.groups()) {
            groups.addAll(x.groupId().equals(g.groupId()) ? List.of(parts.keep, moved) : List.of(x));
        }
        Placement after = withGroups(before, groups);
        // a NIC rule on the other server when its NIC has a rule table; not among the chain server's NIC rules
        boolean ruleTable = bestRes.getNicsList().stream().anyMatch(n -> n.getName().equals(nic)
                && n.getMaxNicRules() > 0);
        // rules the chain has already (the return path shares its hops near the egress point) stay as they are
        Set<Object> have = c.installed.value().switchRules().stream().map(r -> r.rule().id())
                .collect(Collectors.toSet());
        List<InstalledRule> added = path.rules().stream().filter(r -> !have.contains(r.rule().id()))
                .collect(Collectors.toList());
        ScalingOperation op = new ScalingOperation(Kind.SPLIT, chainId, Step.PIPELINE, g.groupId(), newId, tag, core,
                parts.moved, before, after, c.installed.value(), retagged, added, List.of(),
                ruleTable ? RulePlanner.nicRuleId(chainId, newId) : 0, reason,
                onsetMs, start, parts.superseded, parts.slice);
        journal.operations().put(chainId, op);
        if (!store.placements().replace(chainId, c.placement.version(), after)) {
            journal.operations().remove(chainId);
            store.tags().remove(new TagKey(tag));
            throw refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start,
                    "chain " + chainId + " changed while the scale-out was prepared");
        }
        timer.lap("reserve");
        log.info("Scaling out {} group {}: classes {} {} move to {} on {} ({}, core {})", chainId, g.groupId(),
                parts.moved, parts.slice, newId, remote.id(), tag, core);
        return runRemote(op, c.server, remote.agent(), timer);
    }

    /** {@code wanted} when the server has a NIC of that name, else its first cabled NIC. */
    private static String nicOf(MetronServer s, String wanted) {
        return s.attachment(wanted).isPresent() ? wanted : new TreeSet<>(s.attachments().keySet()).first();
    }

    // ---- merge -----------------------------------------------------------------------------------------------

    /**
     * Merges two groups with the same stateful operations: the retired group's classes and flow state move to
     * the kept group; its tag and core are released. The group whose tag marks the chain's egress is always
     * the one kept.
     */
    public ScalingEvent merge(ChainId chainId, String keepId, String retireId, String reason, long onsetMs) {
        synchronized (lock(chainId)) {
            long start = clock.getAsLong();
            StepTimer timer = new StepTimer();
            timer.add("detect", start - onsetMs);
            Ctx c = context(chainId);
            GroupAssignment a = c.group(keepId);
            GroupAssignment b = c.group(retireId);
            if (keepId.equals(retireId)) {
                throw refuse(chainId, Kind.MERGE, List.of(keepId, retireId), reason, onsetMs, start,
                        "cannot merge group " + keepId + " with itself");
            }
            if (c.placement.value().groups().get(0).groupId().equals(retireId)) {
                // the first group's tag is the chain's egress marker (docs/contracts.md#tags): it stays
                GroupAssignment t = a;
                a = b;
                b = t;
            }
            if (a.remote() && !b.remote()) {
                // a group on another server comes back to the chain's server
                GroupAssignment t = a;
                a = b;
                b = t;
            }
            String why = mergeRefusal(c, a, b);
            if (why != null) {
                throw refuse(chainId, Kind.MERGE, List.of(a.groupId(), b.groupId()), reason, onsetMs, start, why);
            }
            ScalingOperation op = mergeOperation(c, a, b, reason, onsetMs, start, true);
            journal.operations().put(chainId, op);
            timer.lap("reserve");
            log.info("Merging {} group {} into {}", chainId, b.groupId(), a.groupId());
            return b.remote() ? runRemote(op, c.server, remoteServer(b).agent(), timer) : run(op, c.server, timer);
        }
    }

    /** Why group {@code b} cannot merge into {@code a} ({@code a} on the chain's server); null when it can. */
    private static String mergeRefusal(Ctx c, GroupAssignment a, GroupAssignment b) {
        if (a.remote()) {
            return "groups " + a.groupId() + " and " + b.groupId() + " both run on other servers than the chain's: "
                    + "one of them merges with a group on " + c.server.id() + " first";
        }
        ClassGroup ba = base(c.compiled, a.groupId());
        ClassGroup bb = base(c.compiled, b.groupId());
        if (!ba.statefulKey().equals(bb.statefulKey()) || ba.classifies() || bb.classifies()) {
            return "groups " + a.groupId() + " ('" + ba.statefulKey() + "') and " + b.groupId() + " ('"
                    + bb.statefulKey() + "') do not have the same stateful operations";
        }
        if (a.core() == b.core() && !b.remote()) {
            return "groups " + a.groupId() + " and " + b.groupId() + " share core " + a.core();
        }
        for (int cls : a.classIds()) {
            // a class both hold comes back together: their slices must be the two halves of one
            if (b.classIds().contains(cls) && a.slice(cls).union(b.slice(cls)).isEmpty()) {
                return "groups " + a.groupId() + " and " + b.groupId() + " both hold parts of class " + cls + " ("
                        + a.slice(cls) + ", " + b.slice(cls) + ") that are not the two halves of one slice";
            }
        }
        return null;
    }

    /**
     * The operation merging {@code b} into {@code a} (docs/scaling.md#merge), which {@link #mergeRefusal} allows:
     * the kept group's classes and slices, the re-tagged rules (two halves of a divided rule joined back into the
     * rule they came from), the retired group's transit rules and NIC rule. A group on another server comes back
     * to the chain's server: the offload rules leave the offload device as the kept group's do, the reply rules
     * the egress point's device as a deployment there plans them, and the transit and return rules only its
     * scale-out needed (the reply path's included) go.
     *
     * @param farReachable false when {@code b}'s server is lost: nothing is asked of it (its NIC rule is left)
     */
    private ScalingOperation mergeOperation(Ctx c, GroupAssignment a, GroupAssignment b, String reason, long onsetMs,
                                            long start, boolean farReachable) {
        ChainId chainId = c.placement.value().chainId();
        TreeSet<Integer> classes = new TreeSet<>(a.classIds());
        classes.addAll(b.classIds());
        Map<Integer, ClassSlice> slices = new HashMap<>(b.slices());
        slices.putAll(a.slices());
        Map<Integer, Integer> joined = new TreeMap<>();
        for (int cls : a.classIds()) {
            if (b.classIds().contains(cls)) {
                slices.put(cls, a.slice(cls).union(b.slice(cls)).orElseThrow());
                joined.put(cls, Integer.numberOfTrailingZeros(a.slice(cls).value() ^ b.slice(cls).value()));
            }
        }
        List<GroupAssignment> groups = new ArrayList<>();
        for (GroupAssignment x : c.placement.value().groups()) {
            if (x.groupId().equals(a.groupId())) {
                // it keeps its port share: the retired group's mappings it absorbs hold ports of another share
                groups.add(new GroupAssignment(a.groupId(), a.tag(), a.core(), new ArrayList<>(classes), slices)
                        .withPortShare(a.portShare()));
            } else if (!x.groupId().equals(b.groupId())) {
                groups.add(x);
            }
        }
        Placement after = withGroups(c.placement.value(), groups);
        InstalledState installed = c.installed.value();
        Set<Integer> whole = new HashSet<>(b.classIds());
        whole.removeAll(joined.keySet());
        List<InstalledRule> retagged = retag(installed, b.tag(), a.tag(), whole);
        // each pair of halves becomes the rule they were made from, tagging for the kept group
        List<InstalledRule> superseded = new ArrayList<>();
        Map<Object, InstalledRule> rejoined = new LinkedHashMap<>();
        StringBuilder sliceText = new StringBuilder();
        for (Map.Entry<Integer, Integer> j : joined.entrySet()) {
            int cls = j.getKey();
            // the two halves of a divided rule share the rule they came from; a rule that went whole to one
            // side (it fixes the bit) has no partner and only changes its tag, if it tagged for the retired one
            Map<Object, List<InstalledRule>> byOrigin = new LinkedHashMap<>();
            Map<Object, FlowRule> origin = new HashMap<>();
            for (Tag t : List.of(a.tag(), b.tag())) {
                for (InstalledRule r : classRules(installed, t, cls)) {
                    // a rule without a source port (neither TCP nor UDP) was never divided
                    FlowRule u = RuleRetagger.sportBits(r.rule()).isEmpty() ? r.rule()
                            : RuleRetagger.unsliced(r.rule(), cls, j.getValue(), a.tag(), app);
                    byOrigin.computeIfAbsent(u.id(), k -> new ArrayList<>()).add(r);
                    origin.put(u.id(), u);
                }
            }
            for (Map.Entry<Object, List<InstalledRule>> o : byOrigin.entrySet()) {
                if (o.getValue().size() > 1) {
                    superseded.addAll(o.getValue());
                    rejoined.put(o.getKey(), new InstalledRule(Role.OFFLOAD, origin.get(o.getKey())));
                } else if (RuleRetagger.taggedClass(o.getValue().get(0).rule(), b.tag()).isPresent()) {
                    FlowRule moved = RuleRetagger.retagOffload(o.getValue().get(0).rule(), cls, a.tag(), app);
                    rejoined.put(moved.id(), new InstalledRule(Role.OFFLOAD, moved));
                }
            }
            sliceText.append(sliceText.length() > 0 ? "; " : "").append(String.format(Locale.ROOT,
                    "class %d joined over source-port bit %d: %s (%s) and %s (%s) -> %s", cls, j.getValue(),
                    a.groupId(), a.slice(cls), b.groupId(), b.slice(cls), slices.get(cls)));
        }
        retagged.addAll(rejoined.values());
        List<InstalledRule> transit = installed.switchRules().stream()
                .filter(r -> r.role() == Role.TRANSIT && RuleRetagger.matchesGroup(r.rule(), b.tag()))
                .collect(Collectors.toList());
        long retiredRule = RulePlanner.nicRuleId(chainId, b.groupId());
        long nicRule = installed.nicRuleIds().contains(retiredRule) ? retiredRule : 0;
        if (b.remote()) {
            // the offload rules leave as the kept group's do; the reply rules as a deployment on the chain's
            // server plans them (the kept group may have none to copy the port from)
            PortNumber home = homePort(installed, a.tag());
            PortNumber replyHome = retagged.stream().anyMatch(r -> r.role() == Role.REPLY)
                    ? homePath(c).towardServer(Role.REPLY) : null;
            retagged = retagged.stream().map(r -> new InstalledRule(r.role(), RuleRetagger.withOutput(r.rule(),
                    r.role() == Role.REPLY ? replyHome : home, app))).collect(Collectors.toList());
            transit = onlyFor(c, b);
            nicRule = farReachable && farHasRuleTable(remoteServer(b), b.nic()) ? retiredRule : 0;
        }
        return new ScalingOperation(Kind.MERGE, chainId, Step.PIPELINE, a.groupId(), b.groupId(), b.tag(), b.core(),
                b.classIds(), c.placement.value(), after, installed, retagged, List.of(), transit, nicRule, reason,
                onsetMs, start, superseded, sliceText.toString());
    }

    /** Whether {@code nic} of {@code s} has a NIC rule table (its resources as last read, else asked now). */
    private boolean farHasRuleTable(MetronServer s, String nic) {
        ServerResources res = resources.fresh(s.id()).orElseGet(() -> calls.await(s.agent().getResources(),
                "reading resources of " + s.agent().target()));
        return res.getNicsList().stream().anyMatch(n -> n.getName().equals(nic) && n.getMaxNicRules() > 0);
    }

    // ---- a lost server ----------------------------------------------------------------------------------------

    /**
     * Server {@code lost} is gone for good (its agent silent past the failover deadline, ChainManager.serverLost):
     * every group of the chain scaled out to it comes back to the chain's server as a merge would bring it back
     * (docs/scaling.md#scale-out), into the group on the chain's server it can join — one holding the other part
     * of a class it holds, else one of the compiled group it comes from, else any with the same stateful
     * operations — without asking the lost agent anything: the kept group takes its classes (and joins their
     * slices), the rules are re-tagged to the kept group and leave toward the chain's server, the transit and
     * return rules only its scale-out needed go. Its flows are lost with the server (no checkpoint of it is
     * reachable): the history entry and the chain's reason say so, with the flows it last reported.
     *
     * @param lastFlows the flows a group of the chain last reported on {@code lost}, by group id; empty if unknown
     * @return the history entries of the groups it tried to bring back: DONE for those back, ROLLED_BACK (or
     *         FAILED, rollback incomplete) for those whose merge back failed and stay placed there, to be tried
     *         again; one no group on the chain's server can take is not tried (recorded FAILED, not returned: it
     *         stays placed there until the chain changes)
     */
    public List<ScalingEvent> serverLost(ChainId chainId, DeviceId lost,
                                         Function<String, OptionalLong> lastFlows) {
        List<ScalingEvent> out = new ArrayList<>();
        synchronized (lock(chainId)) {
            List<String> there = context(chainId).placement.value().groups().stream()
                    .filter(g -> g.server().equals(Optional.of(lost))).map(GroupAssignment::groupId)
                    .collect(Collectors.toList());
            for (String id : there) {
                long start = clock.getAsLong();
                StepTimer timer = new StepTimer();
                Ctx c = context(chainId);
                GroupAssignment b = c.group(id);
                OptionalLong flows = lastFlows.apply(id);
                String lostState = "its flow state is lost with the server ("
                        + (flows.isPresent() ? flows.getAsLong() + " flows at its last report" : "flow count unknown")
                        + "; no checkpoint of it is reachable)";
                Optional<GroupAssignment> keep = c.placement.value().localGroups().stream()
                        .filter(a -> mergeRefusal(c, a, b) == null)
                        .min(Comparator.comparingInt(a -> joinRank(c, a, b)));
                if (keep.isEmpty()) {
                    // recorded FAILED; the other groups there are still brought back
                    log.warn("Chain {}: {}", chainId, refuse(chainId, Kind.MERGE, List.of(id), "server " + lost
                            + " lost", start, start, "no group on " + c.server.id() + " can take group " + id
                            + " of the lost server (classes " + b.classesText() + "): it stays placed there; "
                            + lostState).getMessage());
                    continue;
                }
                GroupAssignment a = keep.get();
                String reason = "server " + lost + " lost: group " + id + " (classes " + b.classesText()
                        + ") merged back into " + a.groupId() + " on " + c.server.id() + "; " + lostState;
                ScalingOperation op = mergeOperation(c, a, b, reason, start, start, false);
                journal.operations().put(chainId, op);
                timer.lap("reserve");
                log.warn("Chain {}: {}", chainId, reason);
                try {
                    out.add(runRemote(op, c.server, null, timer));
                } catch (MetronException e) {
                    // rolled back before the re-tag: the group stays placed there; its entry, just recorded under
                    // the chain's lock, is the history's last
                    log.warn("Chain {}: group {} of lost server {} not brought back: {}", chainId, id, lost,
                            e.getMessage());
                    List<ScalingEvent> h = journal.history(chainId);
                    out.add(h.get(h.size() - 1));
                    continue;
                }
                store.chains().get(chainId).map(Versioned::value).ifPresent(ch -> store.chains().put(chainId,
                        ch.withState(ch.state(), reason)));
            }
        }
        return out;
    }

    /**
     * How well {@code a} suits a group {@code b} of a lost server (lower is better): a group holding part of a
     * class {@code b} holds (the group it was split from), then one of its compiled group, then any.
     */
    private static int joinRank(Ctx c, GroupAssignment a, GroupAssignment b) {
        if (a.classIds().stream().anyMatch(b.classIds()::contains)) {
            return 0;
        }
        return base(c.compiled, a.groupId()).id() == base(c.compiled, b.groupId()).id() ? 1 : 2;
    }

    // ---- steps -----------------------------------------------------------------------------------------------

    /**
     * Runs an operation from its recorded step to the end, rolling back on failure before the re-tag.
     *
     * @param timer the operation's step times so far
     */
    private ScalingEvent run(ScalingOperation op, MetronServer server, StepTimer timer) {
        AgentClient agent = server.agent();
        CompiledChain cc = compiled.compiled(op.chain());
        boolean transitInstalled = false;
        try {
            if (op.step().compareTo(Step.SWITCHED) < 0) {
                // The NIC rule and the pipeline update are independent (nothing carries the new tag before the
                // re-tag), so they run concurrently; both are settled before the switch step or the rollback.
                // The journal entry, written at PIPELINE before anything outside the store changed, covers
                // undoing either (rollback asks the agent what it holds).
                NicRule nicRule = op.kind() == Kind.SPLIT && op.nicRuleId() != 0 ? newNicRule(op) : null;
                CompletableFuture<?> nic = nicRule == null ? CompletableFuture.completedFuture(null)
                        : agent.installNicRules(NicRuleBatch.newBuilder().addRules(nicRule).build());
                long asked = System.nanoTime();
                CompletableFuture<PipelineStatus> pipe = agent.updatePipeline(firstUpdate(op, cc));
                // how long the agent's own part takes, reported next to the step (where the step's time went)
                CompletableFuture<Long> agentMs = pipe.handle((v, e) -> (System.nanoTime() - asked) / 1_000_000);
                // While the agent works: record the union of old and new rules (so that a teardown after a crash
                // removes the new ones too; the chain's lock keeps this instance's teardown out meanwhile), then
                // install the new group's transit rules (server side first; no frame carries its tag before the
                // re-tag, so they change nothing yet).
                ScalingOperation prepared = op;
                CompletableFuture<Void> transit = CompletableFuture.runAsync(() -> {
                    store.installed().put(prepared.chain(), union(prepared));
                    installByDevice(prepared.transitAdded());
                });
                MetronException failed = null;
                try {
                    calls.await(transit, Fault.SWITCH_FAILURE, "recording the rules of " + op.chain()
                            + " and installing its transit rules");
                    transitInstalled = true;
                } catch (MetronException e) {
                    failed = e;
                }
                PipelineStatus updated = null;
                try {
                    updated = calls.build(agent, pipe, "updating pipeline " + op.chain() + " on " + agent.target());
                } catch (MetronException e) {
                    failed = failed == null ? e : failed;
                }
                try {
                    calls.await(nic, "installing the NIC rule of " + op.other() + " on " + agent.target());
                } catch (MetronException e) {
                    failed = failed == null ? e : failed;
                }
                if (failed != null) {
                    throw failed;
                }
                timer.lap("nic+pipeline");
                timer.note("agent " + agentMs.getNow(-1L) + agentSteps(updated));
                op = record(op, Step.SWITCHED);
            }
            if (op.step() == Step.SWITCHED) {
                // the offload device's re-tag as one batch: the barrier is the switch programmer's confirmation
                // (SwitchProgrammer#install). Idempotent, so a recovery that finds this step recorded simply does
                // it again (transit rules too).
                if (!transitInstalled) {
                    installByDevice(op.transitAdded());
                }
                installByDevice(retagged(op, Role.OFFLOAD));
                timer.lap("switch");
            }
        } catch (MetronException e) {
            List<String> left = rollback(op, agent, cc);
            Outcome outcome = left.isEmpty() ? Outcome.ROLLED_BACK : Outcome.FAILED;
            String detail = e.getMessage() + (left.isEmpty() ? " (rolled back)" : " (rollback incomplete: " + left
                    + ")");
            timer.lap("rollback");
            ScalingEvent ev = event(op, outcome, detail, op.before(), timer.toString());
            journal.record(ev);
            throw new MetronException(e.fault(), detail, e);
        }
        // From here the switch sends the moved classes to their new group: only forward.
        List<String> problems = new ArrayList<>();
        boolean repliesRetagged = true;
        if (op.step() == Step.SWITCHED && !op.superseded().isEmpty()) {
            // the rules the new ones divide or join: until they go, a packet may match either at the same
            // priority, and both tag it for a group that holds its flow's state (docs/scaling.md#class-split)
            problems.addAll(removeByDevice(op.superseded()));
            timer.lap("superseded");
        }
        if (op.step() == Step.SWITCHED) {
            repliesRetagged = retagReplies(op, problems, timer);
            try {
                if (op.kind() == Kind.MERGE) {
                    drain(agent, op);
                    timer.lap("drain");
                }
                // state created between the clone and the re-tag: the table that saw a flow first wins
                calls.build(agent, agent.updatePipeline(pipeline(op, cc, op.after(), op.kind() == Kind.SPLIT
                                ? Map.of(op.other(), List.of(op.group(), op.other()))
                                : Map.of(op.group(), List.of(op.other(), op.group())))),
                        "merging window state on " + agent.target());
                timer.lap("sync");
            } catch (MetronException e) {
                problems.add(e.getMessage());
            }
            op = record(op, Step.SYNCED);
        }
        if (op.kind() == Kind.MERGE) {
            problems.addAll(removeByDevice(op.transitRemoved()));
            if (op.nicRuleId() != 0) {
                try {
                    calls.await(agent.removeNicRules(List.of(op.nicRuleId())), "removing the NIC rule of " + op.other());
                } catch (MetronException e) {
                    problems.add(e.getMessage());
                }
            }
            store.tags().remove(new TagKey(op.otherTag()));
        }
        return committed(op, repliesRetagged, problems, timer);
    }

    /**
     * The reply batch, right after the forward batch (docs/scaling.md#replies): until it is confirmed, replies of the
     * moved classes reach the old group, which still holds every mapping made before the operation.
     *
     * @return false when the batch failed (listed in {@code problems}): the switch still holds the old reply rules
     *         (the batch is atomic), and the store is to say so
     */
    private boolean retagReplies(ScalingOperation op, List<String> problems, StepTimer timer) {
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
    private ScalingEvent committed(ScalingOperation op, boolean repliesRetagged, List<String> problems,
                                   StepTimer timer) {
        commit(op, repliesRetagged);
        timer.lap("commit");
        ScalingEvent ev = event(op, Outcome.DONE, problems.isEmpty() ? "" : "completed with problems: " + problems,
                op.after(), timer.toString());
        journal.record(ev);
        return ev;
    }

    // ---- scale-out (docs/scaling.md#scale-out) ----------------------------------------------------------------

    /** The group of the operation that runs on another server (a scale-out's new half, a merge's retired one). */
    private static Optional<GroupAssignment> remoteGroup(ScalingOperation op) {
        Placement p = op.kind() == Kind.SPLIT ? op.after() : op.before();
        return p.groups().stream().filter(g -> g.groupId().equals(op.other()) && g.remote()).findFirst();
    }

    private MetronServer remoteServer(GroupAssignment g) {
        DeviceId id = g.server().orElseThrow();
        return servers.server(id).orElseThrow(() -> new MetronException(Fault.AGENT_FAILURE, "server " + id
                + " of group " + g.groupId() + " is not registered"));
    }

    private RulePlanner planner() {
        if (planner == null) {
            throw new MetronException(Fault.INTERNAL, "this controller was started without scale-out");
        }
        return planner;
    }

    /**
     * The rules that carry traffic to and from group {@code g} on another server and that nothing else of the
     * chain needs: its path's rules less those of the chain's own server and of its other groups elsewhere (the
     * return paths share their hops near the egress point). A lost server the registry no longer lists, or whose
     * cabling is gone (ONOS drops an unavailable device's links), has no path to plan: then only the transit rules
     * carrying {@code g}'s tag are known to be its own, and its return rules stay (they match frames only that
     * server sent).
     */
    private List<InstalledRule> onlyFor(Ctx c, GroupAssignment g) {
        Placement p = c.placement.value();
        Optional<MetronServer> there = g.server().flatMap(servers::server);
        String why = "is not registered";
        if (there.isPresent()) {
            try {
                return plannedOnlyFor(c, g, there.get());
            } catch (MetronException e) {
                // ONOS keeps an unavailable server's device but drops its links: no cabling to plan the path by
                why = "has no path to plan (" + e.getMessage() + ")";
            }
        }
        log.warn("Chain {}: server {} of group {} {}: its return rules stay", p.chainId(), g.server().orElse(null),
                g.groupId(), why);
        return c.installed.value().switchRules().stream()
                .filter(r -> r.role() == Role.TRANSIT && RuleRetagger.matchesGroup(r.rule(), g.tag()))
                .collect(Collectors.toList());
    }

    /** {@link #onlyFor} from the planned paths, {@code there} being {@code g}'s server with its cabling. */
    private List<InstalledRule> plannedOnlyFor(Ctx c, GroupAssignment g, MetronServer there) {
        Placement p = c.placement.value();
        Set<Object> shared = new HashSet<>();
        homePath(c).rules().forEach(r -> shared.add(r.rule().id()));
        p.groups().stream().filter(x -> x.remote() && !x.groupId().equals(g.groupId())).forEach(x -> pathTo(c,
                remoteServer(x), x).rules().forEach(r -> shared.add(r.rule().id())));
        Set<Object> installed = c.installed.value().switchRules().stream().map(r -> r.rule().id())
                .collect(Collectors.toSet());
        return pathTo(c, there, g).rules().stream()
                .filter(r -> !shared.contains(r.rule().id()) && installed.contains(r.rule().id()))
                .collect(Collectors.toList());
    }

    /** The path a group on the chain's own server would have (its first group's tag): rules the chain holds. */
    private RulePlanner.RemotePath homePath(Ctx c) {
        Placement p = c.placement.value();
        return pathTo(c, c.server, p.groups().get(0).onServer(c.server.id(), p.nic(), p.egressNic()));
    }

    /** The rules to and from group {@code g} on server {@code s} and the ports toward it (RulePlanner#remotePath). */
    private RulePlanner.RemotePath pathTo(Ctx c, MetronServer s, GroupAssignment g) {
        Placement p = c.placement.value();
        return planner().remotePath(p.chainId(), c.chain.deployment(), p.offloadDevice().orElseThrow(), s, g,
                p.groups().get(0).tag(), ReplyTraffic.of(c.compiled).present());
    }

    /** The port the offload rules tagging for {@code tag} leave the offload device through. */
    private static PortNumber homePort(InstalledState installed, Tag tag) {
        return installed.switchRules().stream().filter(r -> r.role() == Role.OFFLOAD
                        && RuleRetagger.taggedClass(r.rule(), tag).isPresent())
                .flatMap(r -> r.rule().treatment().allInstructions().stream())
                .filter(i -> i instanceof Instructions.OutputInstruction)
                .map(i -> ((Instructions.OutputInstruction) i).port()).findFirst()
                .orElseThrow(() -> new MetronException(Fault.INTERNAL, "no offload rule tags for " + tag));
    }

    /**
     * Moves flow state between agents: {@code from}'s table of group {@code fromGroup}, filtered to the flows
     * whose key's source port has {@code slice}'s bits (the whole table for whole classes, as a split within one
     * server copies it), imported into {@code toGroup} of {@code to}: replacing its tables, or adding the
     * entries it does not hold ({@code merge}: the target's own mappings win).
     *
     * @return entries imported
     */
    private long moveState(AgentClient from, String fromGroup, AgentClient to, String toGroup, ChainId chain,
                           ClassSlice slice, boolean merge) {
        StateSnapshot snap = calls.await(from.exportState(chain.name(), fromGroup), "exporting the state of " + fromGroup
                + " from " + from.target());
        StateSnapshot.Builder kept = snap.toBuilder().clearTables();
        for (StateTable t : snap.getTablesList()) {
            kept.addTables(t.toBuilder().clearEntries().addAllEntries(t.getEntriesList().stream()
                    .filter(e -> slice.contains(e.getKey().getSrcPort())).collect(Collectors.toList())));
        }
        return calls.build(to, to.importState(ImportStateRequest.newBuilder().setSnapshot(kept).setTargetGroupId(toGroup)
                .setMerge(merge).build()), "importing the state of " + fromGroup + " into " + toGroup + " on "
                + to.target()).getEntries();
    }

    /** The slice of flows a scaled-out group holds: its class slice when it holds one slice of one class. */
    private static ClassSlice stateSlice(GroupAssignment g) {
        return g.classIds().size() == 1 ? g.slice(g.classIds().get(0)) : ClassSlice.WHOLE;
    }

    /**
     * Runs a scale-out or its merge back from its recorded step, in the order of docs/scaling.md#scale-out:
     * PIPELINE (the other server's pipeline and its state over gRPC, transit and return rules), SWITCHED (the
     * offload device's re-tag in one batch, then the reply rules' batch), SYNCED (window flows), commit.
     *
     * @param far the other server's agent; null for a merge back from a lost server ({@link #serverLost}):
     *            nothing is asked of it, its flows are not copied and its pipeline and NIC rule are left
     */
    private ScalingEvent runRemote(ScalingOperation op, MetronServer home, AgentClient far, StepTimer timer) {
        AgentClient local = home.agent();
        CompiledChain cc = compiled.compiled(op.chain());
        GroupAssignment rg = remoteGroup(op).orElseThrow();
        Tag marker = op.before().groups().get(0).tag();
        boolean split = op.kind() == Kind.SPLIT;
        try {
            if (op.step().compareTo(Step.SWITCHED) < 0) {
                store.installed().put(op.chain(), union(op));
                if (split) {
                    long asked = System.nanoTime();
                    DeployPipelineRequest there = RulePlanner.remotePipeline(op.chain(), op.after(),
                            rg.server().orElseThrow(), cc, marker);
                    // beside the chain's other groups there (kept running with their flows), or a new pipeline
                    calls.build(far, there.getGroupsCount() > 1 ? far.updatePipeline(RulePlanner.asUpdate(there))
                            : far.deployPipeline(there), "deploying " + op.other() + " of " + op.chain() + " on "
                            + far.target());
                    if (op.nicRuleId() != 0) {
                        calls.await(far.installNicRules(NicRuleBatch.newBuilder().addRules(RulePlanner.remoteNicRule(
                                op.chain(), rg)).build()), "installing the NIC rule of " + op.other() + " on "
                                + far.target());
                    }
                    long n = moveState(local, op.group(), far, op.other(), op.chain(), stateSlice(rg), false);
                    timer.lap("nic+pipeline");
                    timer.note("remote agent " + (System.nanoTime() - asked) / 1_000_000 + ", " + n + " flows copied");
                    installByDevice(op.transitAdded());
                    timer.lap("transit");
                } else {
                    // the kept group takes the merged classes (adopting its own table), then the remote flows
                    keepOwnTables(local, op, cc);
                    long n = far == null ? 0
                            : moveState(far, op.other(), local, op.group(), op.chain(), ClassSlice.WHOLE, true);
                    timer.lap("pipeline+state");
                    timer.note(far == null ? "the other server is lost: no flows to add" : n + " flows added");
                }
                op = record(op, Step.SWITCHED);
            }
            if (op.step() == Step.SWITCHED) {
                installByDevice(op.transitAdded());
                installByDevice(retagged(op, Role.OFFLOAD));
                timer.lap("switch");
            }
        } catch (MetronException e) {
            List<String> left = split ? rollbackRemote(op, far, rg) : rollback(op, local, cc);
            Outcome outcome = left.isEmpty() ? Outcome.ROLLED_BACK : Outcome.FAILED;
            String detail = e.getMessage() + (left.isEmpty() ? " (rolled back)" : " (rollback incomplete: " + left
                    + ")");
            timer.lap("rollback");
            journal.record(event(op, outcome, detail, op.before(), timer.toString()));
            throw new MetronException(e.fault(), detail, e);
        }
        List<String> problems = new ArrayList<>();
        boolean repliesRetagged = true;
        if (op.step() == Step.SWITCHED) {
            if (!op.superseded().isEmpty()) {
                problems.addAll(removeByDevice(op.superseded()));
                timer.lap("superseded");
            }
            // toward the other server (split) or back (merge), before the retired group drains
            repliesRetagged = retagReplies(op, problems, timer);
            try {
                if (split) {
                    // the kept group drops the moved classes (adopting its table); flows it mapped for them
                    // between the export and the re-tag reach the remote group (which keeps its own on a clash)
                    keepOwnTables(local, op, cc);
                    moveState(local, op.group(), far, op.other(), op.chain(), stateSlice(rg), true);
                } else if (far != null) {
                    drain(far, op);
                    timer.lap("drain");
                    moveState(far, op.other(), local, op.group(), op.chain(), ClassSlice.WHOLE, true);
                    timer.lap("sync");
                }
            } catch (MetronException e) {
                problems.add(e.getMessage());
            }
            op = record(op, Step.SYNCED);
        }
        if (!split) {
            problems.addAll(removeByDevice(op.transitRemoved()));
            if (far != null) {
                problems.addAll(removeRemote(op, far, rg, op.after(), cc));
            }
            store.tags().remove(new TagKey(op.otherTag()));
        }
        return committed(op, repliesRetagged, problems, timer);
    }

    /**
     * Removes a scaled-out group's NIC rule and pipeline from its server, as far as they are there; the pipeline is
     * updated instead when {@code remaining} keeps other groups of the chain there (they run on with their flows).
     */
    private List<String> removeRemote(ScalingOperation op, AgentClient far, GroupAssignment rg, Placement remaining,
                                      CompiledChain cc) {
        List<String> left = new ArrayList<>();
        long id = op.nicRuleId();
        try {
            if (id != 0) {
                calls.await(AgentCalls.removeNicRulesPresent(far, List.of(id)), "removing the NIC rule of "
                        + op.other() + " from " + far.target());
            }
        } catch (MetronException e) {
            left.add(e.getMessage());
        }
        try {
            DeviceId server = rg.server().orElseThrow();
            if (remaining.groups().stream().noneMatch(g -> g.server().equals(Optional.of(server)))) {
                calls.await(AgentCalls.removePipelinePresent(far, op.chain().name()), "removing " + op.other()
                        + " from " + far.target());
            } else if (calls.await(far.listPipelines(), "listing pipelines of " + far.target()).getPipelinesList()
                    .stream().anyMatch(s -> s.getPipelineId().equals(op.chain().name()))) {
                // other groups of the chain run on there with their flows
                calls.build(far, far.updatePipeline(RulePlanner.asUpdate(RulePlanner.remotePipeline(op.chain(),
                        remaining, server, cc, op.before().groups().get(0).tag()))), "retiring " + op.other()
                        + " on " + far.target());
            }
        } catch (MetronException e) {
            left.add(e.getMessage());
        }
        return left;
    }

    /** Undoes a scale-out stopped before its re-tag: the other server's pipeline and rules, the tag, the store. */
    private List<String> rollbackRemote(ScalingOperation op, AgentClient far, GroupAssignment rg) {
        List<String> left = new ArrayList<>(removeByDevice(op.transitAdded()));
        left.addAll(removeRemote(op, far, rg, op.before(), compiled.compiled(op.chain())));
        releaseSplit(op);
        restoreRecords(op);
        return left;
    }

    /**
     * The chain's pipeline on its own server after a scale-out or its merge back ({@code op.after()}), the kept
     * group adopting its own tables: the other server's flows are copied separately.
     */
    private void keepOwnTables(AgentClient local, ScalingOperation op, CompiledChain cc) {
        calls.build(local, local.updatePipeline(pipeline(op, cc, op.after(), Map.of(op.group(), List.of(op.group())))),
                "updating pipeline " + op.chain() + " on " + local.target());
    }

    /**
     * The first pipeline update: split — both halves start from the group's state; merge — the kept group gets
     * both states and keeps its class list (a class may belong to one group only; packets of classes a group
     * does not list are processed all the same, only counted as unknown until the sync step).
     */
    private static UpdatePipelineRequest firstUpdate(ScalingOperation op, CompiledChain cc) {
        return op.kind() == Kind.SPLIT
                ? pipeline(op, cc, op.after(), Map.of(op.group(), List.of(op.group()), op.other(),
                        List.of(op.group())))
                : pipeline(op, cc, op.before(), Map.of(op.group(), List.of(op.group(), op.other())), op.after());
    }

    /** Waits until the retired group has stopped receiving frames (its packet counter holds still). */
    private void drain(AgentClient agent, ScalingOperation op) {
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

    /** @param repliesRetagged false when the reply batch failed: the installed rules keep the old reply rules */
    private void commit(ScalingOperation op, boolean repliesRetagged) {
        Optional<Versioned<Placement>> p = store.placements().get(op.chain());
        if (op.kind() == Kind.MERGE && p.isPresent()) {
            store.placements().replace(op.chain(), p.get().version(), op.after());
        }
        Optional<Versioned<InstalledState>> inst = store.installed().get(op.chain());
        if (inst.isPresent()) {
            store.installed().replace(op.chain(), inst.get().version(), finalInstalled(op, repliesRetagged));
        }
        journal.operations().remove(op.chain());
        // every split, merge and scale-out ends here: the backups computed for the old rules no longer fit
        compiled.rulesChanged(op.chain());
    }

    /** Puts everything back as before the operation; answers what could not be undone. */
    private List<String> rollback(ScalingOperation op, AgentClient agent, CompiledChain cc) {
        List<String> left = new ArrayList<>();
        if (op.step().compareTo(Step.PIPELINE) >= 0) {
            // The offload rules need no restoring: rollback only happens before the re-tag batch was confirmed,
            // and that batch is atomic (SwitchProgrammer#install), so they are still the original ones.
            left.addAll(removeByDevice(op.transitAdded()));
            try {
                boolean otherRuns = calls.await(agent.listPipelines(), "listing pipelines").getPipelinesList().stream()
                        .filter(s -> s.getPipelineId().equals(op.chain().name()))
                        .flatMap(s -> s.getGroupsList().stream()).anyMatch(g -> g.getGroupId().equals(op.other()));
                PipelineStatus ignored = null;
                if (op.kind() == Kind.SPLIT && otherRuns) {
                    // flows the new group created go back with it; the group's own table wins conflicts
                    ignored = calls.build(agent, agent.updatePipeline(pipeline(op, cc, op.before(),
                            Map.of(op.group(), List.of(op.group(), op.other())))), "restoring pipeline " + op.chain());
                } else if (op.kind() == Kind.MERGE) {
                    ignored = calls.build(agent, agent.updatePipeline(pipeline(op, cc, op.before(), Map.of(op.group(),
                            List.of(op.group()), op.other(), List.of(op.other(), op.group())))),
                            "restoring pipeline " + op.chain());
                }
            } catch (MetronException e) {
                left.add(e.getMessage());
            }
        }
        if (op.kind() == Kind.SPLIT) {
            if (op.nicRuleId() != 0) {
                try {
                    // the operation may have stopped before installing it
                    calls.await(AgentCalls.removeNicRulesPresent(agent, List.of(op.nicRuleId())),
                            "removing the NIC rule of " + op.other());
                } catch (MetronException e) {
                    left.add(e.getMessage());
                }
            }
            releaseSplit(op);
        }
        restoreRecords(op);
        return left;
    }

    /** A split's tag released (if still its own) and the placement put back (if still the split's). */
    private void releaseSplit(ScalingOperation op) {
        Optional<Versioned<TagAllocation>> t = store.tags().get(new TagKey(op.otherTag()));
        if (t.isPresent() && t.get().value().chainId().equals(op.chain())
                && t.get().value().groupId().equals(op.other())) {
            store.tags().remove(new TagKey(op.otherTag()));
        }
        store.placements().get(op.chain()).filter(v -> v.value().equals(op.after()))
                .ifPresent(v -> store.placements().replace(op.chain(), v.version(), op.before()));
    }

    /** The installed rules as before the operation, and its journal entry gone. */
    private void restoreRecords(ScalingOperation op) {
        store.installed().get(op.chain())
                .ifPresent(v -> store.installed().replace(op.chain(), v.version(), op.installedBefore()));
        journal.operations().remove(op.chain());
    }

    // ---- recovery --------------------------------------------------------------------------------------------

    /**
     * Completes (re-tag done) or rolls back (not yet) every operation the journal holds for a chain {@code owned}
     * accepts: run at start, before the monitor decides anything, for the chains this instance owns, and again for
     * a chain whose owner stopped mid-operation once this instance owns it. An operation whose chain was deleted
     * meanwhile is dropped (its removal took everything of it off); one that cannot be recovered is logged and left,
     * never failing the others.
     *
     * @return the history entries recorded
     */
    public List<ScalingEvent> recover(Predicate<ChainId> owned) {
        List<ScalingEvent> out = new ArrayList<>();
        for (ScalingOperation op : journal.inProgress()) {
            if (!owned.test(op.chain())) {
                continue;
            }
            synchronized (lock(op.chain())) {
                // a chain the operator deleted is never scaled again: its removal takes what the operation left
                Optional<Chain> chain = store.chains().get(op.chain()).map(Versioned::value);
                if (chain.isEmpty() || chain.get().markedForRemoval()) {
                    journal.operations().remove(op.chain());
                    log.warn("Not recovering {} of {}: the chain was deleted", op.kind(), op.chain());
                    continue;
                }
                try {
                    recoverOne(op, out);
                } catch (RuntimeException e) {
                    log.warn("Recovery of {} of {} failed: {}", op.kind(), op.chain(), e.toString());
                }
            }
        }
        return out;
    }

    /** {@link #recover} of one operation; caller holds the chain's lock. */
    private void recoverOne(ScalingOperation op, List<ScalingEvent> out) {
        Optional<MetronServer> server = op.before().server().flatMap(servers::server);
        if (server.isEmpty()) {
            log.warn("Cannot recover {} of {}: server {} not registered", op.kind(), op.chain(),
                    op.before().server());
            return;
        }
        log.info("Recovering {} of {} from step {}", op.kind(), op.chain(), op.step());
        Optional<MetronServer> remote = remoteGroup(op).flatMap(GroupAssignment::server)
                .flatMap(servers::server);
        if (remoteGroup(op).isPresent() && remote.isEmpty()) {
            log.warn("Cannot recover {} of {}: the other server of {} is not registered", op.kind(),
                    op.chain(), op.other());
            return;
        }
        if (remote.isPresent() && (op.step().compareTo(Step.SWITCHED) >= 0 || op.kind() == Kind.MERGE)) {
            try {
                // a merge back stopped before its re-tag: the chain's server restores the kept group
                out.add(op.step().compareTo(Step.SWITCHED) >= 0
                        ? runRemote(op, server.get(), remote.get().agent(), new StepTimer())
                        : rollbackEvent(op, rollback(op, server.get().agent(), compiled.compiled(op.chain()))));
            } catch (MetronException e) {
                log.warn("Recovery of {} failed: {}", op, e.getMessage());
            }
        } else if (remote.isPresent()) {
            out.add(rollbackEvent(op, rollbackRemote(op, remote.get().agent(), remoteGroup(op).get())));
        } else if (op.step().compareTo(Step.SWITCHED) >= 0) {
            try {
                out.add(run(op, server.get(), new StepTimer()));
            } catch (MetronException e) {
                log.warn("Recovery of {} failed: {}", op, e.getMessage());
            }
        } else {
            out.add(rollbackEvent(op, rollback(op, server.get().agent(), compiled.compiled(op.chain()))));
        }
    }

    /** Records the history entry of an operation a restarted controller rolled back. */
    private ScalingEvent rollbackEvent(ScalingOperation op, List<String> left) {
        ScalingEvent ev = event(op, left.isEmpty() ? Outcome.ROLLED_BACK : Outcome.FAILED, "controller restarted at"
                + " step " + op.step() + (left.isEmpty() ? " (rolled back)" : " (rollback incomplete: " + left + ")"),
                op.before(), "");
        journal.record(ev);
        return ev;
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    /** What one operation needs to know about the chain, read once at its start. */
    private final class Ctx {
        final Chain chain;
        final Versioned<Placement> placement;
        final Versioned<InstalledState> installed;
        final MetronServer server;
        final CompiledChain compiled;

        Ctx(Chain chain, Versioned<Placement> placement, Versioned<InstalledState> installed, MetronServer server,
            CompiledChain compiled) {
            this.chain = chain;
            this.placement = placement;
            this.installed = installed;
            this.server = server;
            this.compiled = compiled;
        }

        GroupAssignment group(String id) {
            return placement.value().groups().stream().filter(g -> g.groupId().equals(id)).findFirst()
                    .orElseThrow(() -> new MetronException(Fault.INVALID_CHAIN, "chain " + placement.value()
                            .chainId() + " has no group '" + id + "' (groups: " + placement.value().groups()
                            .stream().map(GroupAssignment::groupId).collect(Collectors.toList()) + ")"));
        }
    }

    private Ctx context(ChainId id) {
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

    /** The chain's reply classes and what they answer (the units its groups split into). */
    public ReplyTraffic replies(ChainId id) {
        return ReplyTraffic.of(compiled.compiled(id));
    }

    /** "reply class 5 answers [0, 1]; reply class 7 answers [2]", for the reply classes among {@code classes}. */
    private static String answering(ReplyTraffic replies, List<Integer> classes) {
        return classes.stream().filter(k -> !replies.answers(k).isEmpty())
                .map(k -> "reply class " + k + " answers forward classes " + replies.answers(k))
                .collect(Collectors.joining("; "));
    }

    /**
     * The compiled group each of a placement's groups comes from (stateful key, whether it classifies), keyed by
     * placed group id.
     */
    public Map<String, ClassGroup> baseGroups(ChainId id, Placement p) {
        CompiledChain cc = compiled.compiled(id);
        Map<String, ClassGroup> out = new LinkedHashMap<>();
        p.groups().forEach(g -> out.put(g.groupId(), base(cc, g.groupId())));
        return out;
    }

    private static ClassGroup base(CompiledChain cc, String groupId) {
        return RulePlanner.compiledGroup(cc, groupId);
    }

    /** "g3.1", "g3.2", ...: the lowest number free in the placement. */
    private static String childId(Placement p, ClassGroup base) {
        Set<String> used = p.groups().stream().map(GroupAssignment::groupId).collect(Collectors.toSet());
        for (int n = 1; ; n++) {
            String id = "g" + base.id() + "." + n;
            if (!used.contains(id)) {
                return id;
            }
        }
    }

    /** Lowest core the agent of {@code server} offers that no placement holds, -1 when none (caller holds the reservation lock). */
    private int freeCore(DeviceId server, ServerResources res) {
        List<Integer> free = freeCores(server, res);
        return free.isEmpty() ? -1 : free.get(0);
    }

    /** Cores the agent of {@code server} offers that no placement or operation holds, lowest first. */
    private List<Integer> freeCores(DeviceId server, ServerResources res) {
        Set<Integer> taken = new HashSet<>();
        store.placements().snapshot().values().forEach(p -> taken.addAll(p.coresOn(server)));
        journal.inProgress().forEach(op -> {
            if (op.kind() == Kind.SPLIT) {
                taken.addAll(op.after().coresOn(server));
            }
        });
        return res.getCoresList().stream().filter(Core::getAvailable)
                .filter(k -> k.getPipelineId().isEmpty() && !taken.contains(k.getId())).map(Core::getId).sorted()
                .collect(Collectors.toList());
    }

    private static Placement withGroups(Placement p, List<GroupAssignment> groups) {
        return new Placement(p.chainId(), p.server(), p.nic(), p.egressNic(), p.offloadDevice(), p.offloadProfile(),
                groups);
    }

    /**
     * Rules tagging {@code classes} with {@code from}, rewritten to tag them with {@code to}: the offload rules
     * (forward traffic), then the reply rules (replies, where they enter). The forward ones come first: the
     * switch step installs them as the point of no return and the reply rules right after (docs/scaling.md).
     */
    private List<InstalledRule> retag(InstalledState installed, Tag from, Tag to, Set<Integer> classes) {
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

    /** The re-tagged rules of {@code role} ({@link #retag}). */
    private static List<InstalledRule> retagged(ScalingOperation op, Role role) {
        return op.retagged().stream().filter(r -> r.role() == role).collect(Collectors.toList());
    }

    private static InstalledState union(ScalingOperation op) {
        return op.kind() == Kind.SPLIT ? union(op.installedBefore(), op.transitAdded(), op.retagged(), localNicRule(op))
                : union(op.installedBefore(), List.of(), op.retagged(), 0);
    }

    /** The operation's NIC rule on the chain's server; 0 when none, or when it is on another server's NIC. */
    private static long localNicRule(ScalingOperation op) {
        return remoteGroup(op).isPresent() ? 0 : op.nicRuleId();
    }

    /** The old rules plus every rule the operation may install: what a teardown meanwhile must remove. */
    private static InstalledState union(InstalledState s, List<InstalledRule> added, List<InstalledRule> retagged,
                                        long nicRule) {
        List<InstalledRule> rules = new ArrayList<>(added);
        rules.addAll(s.switchRules());
        rules.addAll(retagged);
        List<Long> nic = new ArrayList<>(s.nicRuleIds());
        if (nicRule != 0) {
            nic.add(nicRule);
        }
        return new InstalledState(s.chainId(), s.server(), rules, nic, s.pipeline());
    }

    /** The chain's rules after the operation, in install order (transit before offload). */
    private static InstalledState finalInstalled(ScalingOperation op, boolean repliesRetagged) {
        InstalledState s = op.installedBefore();
        Map<Object, InstalledRule> retagged = new LinkedHashMap<>();
        op.retagged().stream().filter(r -> repliesRetagged || r.role() != Role.REPLY)
                .forEach(r -> retagged.put(r.rule().id(), r));
        Set<Object> removed = op.transitRemoved().stream().map(r -> r.rule().id()).collect(Collectors.toSet());
        Set<Object> superseded = op.superseded().stream().map(r -> r.rule().id()).collect(Collectors.toSet());
        Set<Object> old = s.switchRules().stream().map(r -> r.rule().id()).collect(Collectors.toSet());
        // rules with a new match (class slices) take the place of the rules they supersede at their priority
        List<InstalledRule> fresh = retagged.values().stream().filter(r -> !old.contains(r.rule().id()))
                .collect(Collectors.toCollection(ArrayList::new));
        List<InstalledRule> rules = new ArrayList<>(op.transitAdded());
        for (InstalledRule r : s.switchRules()) {
            if (superseded.contains(r.rule().id())) {
                for (java.util.Iterator<InstalledRule> it = fresh.iterator(); it.hasNext(); ) {
                    InstalledRule x = it.next();
                    if (x.rule().deviceId().equals(r.rule().deviceId()) && x.rule().priority() == r.rule().priority()) {
                        rules.add(x);
                        it.remove();
                    }
                }
            } else if (!removed.contains(r.rule().id())) {
                rules.add(retagged.getOrDefault(r.rule().id(), r));
            }
        }
        rules.addAll(fresh);
        List<Long> nic = new ArrayList<>(s.nicRuleIds());
        if (localNicRule(op) != 0) {
            if (op.kind() == Kind.SPLIT) {
                nic.add(op.nicRuleId());
            } else {
                nic.remove(Long.valueOf(op.nicRuleId()));
            }
        }
        return new InstalledState(s.chainId(), s.server(), rules, nic, s.pipeline());
    }

    /** The new group's NIC rule, as a deployment of the split placement would install it. */
    private static NicRule newNicRule(ScalingOperation op) {
        return RulePlanner.nicRules(op.chain(), op.after()).stream().filter(r -> r.getId() == op.nicRuleId())
                .findFirst().orElseThrow(() -> new MetronException(Fault.INTERNAL, "placement " + op.after()
                        + " has no NIC rule for group " + op.other()));
    }

    /** The full group set of {@code p} as an UpdatePipeline request, with state sources per group. */
    private static UpdatePipelineRequest pipeline(ScalingOperation op, CompiledChain cc, Placement p,
                                                  Map<String, List<String>> stateFrom) {
        return pipeline(op, cc, p, stateFrom, p);
    }

    /**
     * @param target the placement whose slices say which flows each group takes from its sources: a merge's
     *               kept group, still holding its half, takes the whole of the class it will hold
     */
    private static UpdatePipelineRequest pipeline(ScalingOperation op, CompiledChain cc, Placement p,
                                                  Map<String, List<String>> stateFrom, Placement target) {
        UpdatePipelineRequest.Builder req = UpdatePipelineRequest.newBuilder().setPipelineId(op.chain().name());
        for (GroupAssignment g : p.localGroups()) {
            List<String> from = stateFrom.getOrDefault(g.groupId(), List.of());
            GroupSpec.Builder spec = RulePlanner.groupSpec(base(cc, g.groupId()), g).addAllStateFrom(from);
            GroupAssignment t = target.groups().stream().filter(x -> x.groupId().equals(g.groupId())).findFirst()
                    .orElse(g);
            if (!from.isEmpty() && t.classIds().size() == 1 && !t.slices().isEmpty()) {
                // a group holding one slice of one class needs its sources' flows of that slice only
                spec.setStateFilter(RulePlanner.portBits(t.slice(t.classIds().get(0))));
            }
            req.addGroups(spec);
        }
        return req.build();
    }

    private void installByDevice(List<InstalledRule> rules) {
        for (Map.Entry<DeviceId, List<FlowRule>> e : byDevice(rules).entrySet()) {
            calls.await(switches.install(e.getKey(), e.getValue()), Fault.SWITCH_FAILURE, "installing "
                    + e.getValue().size() + " rules on " + e.getKey());
        }
    }

    private List<String> removeByDevice(List<InstalledRule> rules) {
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

    private static Map<DeviceId, List<FlowRule>> byDevice(List<InstalledRule> rules) {
        Map<DeviceId, List<FlowRule>> out = new LinkedHashMap<>();
        rules.forEach(r -> out.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r.rule()));
        return out;
    }

    private ScalingOperation record(ScalingOperation op, Step next) {
        ScalingOperation n = op.at(next);
        journal.operations().put(op.chain(), n);
        return n;
    }

    private ScalingEvent event(ScalingOperation op, Outcome outcome, String detail, Placement result,
                               String steps) {
        long now = clock.getAsLong();
        List<String> groups = List.of(op.group(), op.other());
        return new ScalingEvent(now, op.chain(), op.kind(), groups, op.before().cores(), result.cores(), op.moved(),
                op.reason(), outcome, detail, now - op.onsetMs(), now - op.startMs(), steps, op.slice());
    }

    /**
     * The agent's own account of an update (PipelineStatus.steps), e.g. "; in the agent 14.2: wait 0.0 + build
     * 5.1 + ...": what of the call's time the agent spent, and on what; "" when it reports none.
     */
    private static String agentSteps(PipelineStatus status) {
        if (status == null || status.getStepsCount() == 0) {
            return "";
        }
        long total = status.getStepsList().stream().mapToLong(StepTime::getMicros).sum();
        return String.format(Locale.ROOT, "; in the agent %.1f: ", total / 1000.0) + status.getStepsList().stream()
                .map(t -> String.format(Locale.ROOT, "%s %.1f", t.getName(), t.getMicros() / 1000.0))
                .collect(Collectors.joining(" + "));
    }

    /** Milliseconds per step of one run, for the history entry (where an operation's time went). */
    private static final class StepTimer {
        private final StringBuilder out = new StringBuilder();
        private long last = System.nanoTime();

        void lap(String step) {
            long now = System.nanoTime();
            add(step, (now - last) / 1_000_000);
            last = now;
        }

        /** A step timed elsewhere (before this run started). */
        void add(String step, long ms) {
            out.append(out.length() > 0 ? ", " : "").append(step).append(' ').append(ms);
        }

        /** A detail of the last step, in parentheses after its time. */
        void note(String detail) {
            out.append(" (").append(detail).append(')');
        }

        @Override
        public String toString() {
            return out.toString();
        }
    }

    /** Records a refusal (nothing was changed) and answers the exception to throw. */
    private MetronException refuse(ChainId chain, Kind kind, List<String> groups, String reason, long onsetMs,
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

    private Object lock(ChainId id) {
        return store.lockFor(id);
    }
}
