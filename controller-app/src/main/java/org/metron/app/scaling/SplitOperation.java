package org.metron.app.scaling;

import org.metron.agent.v1.ServerResources;
import org.metron.app.api.ChainId;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.impl.AgentCalls;
import org.metron.app.impl.ChainFence;
import org.metron.app.impl.OwnedChainMoves;
import org.metron.app.impl.ReadiedCores;
import org.metron.app.impl.ReplyTraffic;
import org.metron.app.impl.AgentRequests;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.store.PreparedMoveRecord;
import org.metron.app.store.TagKey;
import org.metron.synth.ClassGroup;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static org.metron.app.scaling.OperationPlans.answering;
import static org.metron.app.scaling.OperationPlans.base;
import static org.metron.app.scaling.OperationPlans.childId;
import static org.metron.app.scaling.OperationPlans.classRules;
import static org.metron.app.scaling.OperationPlans.slicesOf;
import static org.metron.app.scaling.OperationPlans.withGroups;

/**
 * Splits a group (docs/scaling.md#steps): the half of its classes with about half the measured rate, or one
 * class's half by a source-port bit (docs/scaling.md#class-split), moves to a new group with a new tag and core and
 * a copy of the group's flow state. Reserves the core and tag and journals the operation (step 1), then hands it
 * to the runner; with no free core on the chain's server it scales out ({@link ScaleOut}).
 */
final class SplitOperation {
    private static final Logger log = LoggerFactory.getLogger(SplitOperation.class);

    private final OperationRunner runner;
    private final ScaleOut scaleOut;
    /** Takes back a failover move readied for the chain being split ({@link #supersedeReadied}). */
    private final OwnedChainMoves moves;

    SplitOperation(OperationRunner runner, ScaleOut scaleOut, OwnedChainMoves moves) {
        this.runner = runner;
        this.scaleOut = scaleOut;
        this.moves = Objects.requireNonNull(moves);
    }

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
        return splitting(chainId, groupId, reason, onsetMs, (c, g, base, start, timer) -> {
            if (base.classifies()) {
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "group " + groupId
                        + " classifies unclassified traffic in software: its tag receives every such class, so "
                        + "it does not split");
            }
            if (g.classIds().size() < 2) {
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "group " + groupId
                        + " has one class " + g.classIds() + ": a single class cannot split");
            }
            ReplyTraffic replies = ReplyTraffic.of(c.compiled);
            List<List<Integer>> units = replies.units(g.classIds());
            if (units.size() < 2) {
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "group " + groupId
                        + " of chain " + chainId + " cannot split: its classes " + g.classIds() + " move only "
                        + "together, since a reply must reach the core holding its flow's mapping and "
                        + answering(replies, g.classIds()));
            }
            GroupSplitter.Halves halves = GroupSplitter.splitUnits(units, classRates);
            return reserveAndRun(c, g, base, reason, onsetMs, start, timer, (newId, tag, core) -> new SplitParts(
                    new GroupAssignment(groupId, g.tag(), g.core(), halves.keep(), slicesOf(g, halves.keep())),
                    new GroupAssignment(newId, tag, core, halves.move(), slicesOf(g, halves.move())),
                    runner.retag(c.installed.value(), g.tag(), tag, Set.copyOf(halves.move())), List.of(),
                    halves.move(), ""));
        });
    }

    /** The body of a split, given the chain as read at its start. */
    private interface SplitBody {
        ScalingEvent run(Ctx c, GroupAssignment g, ClassGroup base, long start, StepTimer timer);
    }

    /** Runs a split of {@code groupId} under the chain's lock, timing from its onset. */
    private ScalingEvent splitting(ChainId chainId, String groupId, String reason, long onsetMs, SplitBody body) {
        synchronized (runner.lock(chainId)) {
            try (ChainFence.Op fence = runner.fence(chainId)) {
                long start = runner.clock.getAsLong();
                StepTimer timer = new StepTimer();
                timer.add("detect", start - onsetMs);
                Ctx c = runner.context(chainId);
                timer.lap("context");
                GroupAssignment g = c.group(groupId);  // an unknown group is named as such first
                ClassGroup base = base(c.compiled, groupId);
                String pinned = PinnedBlackBoxes.refusal(c.chain.json(), base, "group " + groupId + " of chain "
                        + chainId + " cannot split");
                if (pinned != null) {
                    throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, pinned);
                }
                return body.run(c, g, base, start, timer);
            }
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
        return splitting(chainId, groupId, reason, onsetMs, (c, g, base, start, timer) -> {
            String refusal = classSplitRefusal(c, g, base, cls, bit);
            if (refusal != null) {
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, refusal);
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
                                g.tag(), runner.app)));
                        changed.add(new InstalledRule(Role.OFFLOAD, RuleRetagger.sliced(r.rule(), cls, bit, true,
                                tag, runner.app)));
                        superseded.add(r);
                    } else if (fixed.isPresent() && (fixed.get().value() >> bit & 1) != 0) {
                        // its packets all have the bit set (e.g. source port 0 is never): it moves whole
                        changed.add(new InstalledRule(Role.OFFLOAD, RuleRetagger.retagOffload(r.rule(), cls, tag,
                                runner.app)));
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

    /**
     * Takes back the failover move readied for the chain, if any, once its server's agent answers. The move is
     * readied when that agent answers a Health poll late (at rate on two loaded CPUs it does) and runs the chain's
     * pipeline on another server's core until the agent answers a later poll or the failover deadline passes: the
     * core a scale-out may need. On the fast network's two-servers topology (one worker core per server) the
     * scale-out was refused so ("no free core on metron:srv2 ..., and none on servers [metron:srv1]", the other
     * server's only core running the readied pipeline: test_fastmoves_e2e's TestTwoServers). The split changes the
     * placement the move was readied for (a move after the deadline would find it stale and start from scratch),
     * so it supersedes the move, as a drain's move does. An agent that does not answer keeps the move for the
     * failover: the split is refused, nothing changed (it could not run on that agent anyway). Caller holds the
     * chain's lock and not the reservation lock (the take-back asks the spare's agent).
     */
    private void supersedeReadied(Ctx c, String groupId, String reason, long onsetMs, long start) {
        ChainId id = c.chain.id();
        Optional<PreparedMoveRecord> readied = runner.store.prepared().get(id).map(Versioned::value);
        if (readied.isEmpty()) {
            return;
        }
        try {
            runner.calls.await(c.server.agent().health(), "health of " + c.server.id());
        } catch (MetronException e) {
            throw runner.refuse(id, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "the agent of "
                    + c.server.id() + " does not answer (" + AgentCalls.reason(e) + ") and a failover move of chain "
                    + id + " is readied on " + readied.get().to() + ": group " + groupId + " not split, nothing "
                    + "was changed");
        }
        moves.dropReadied(id, "a split of group " + groupId + " supersedes it, " + c.server.id() + " answering");
    }

    /**
     * Takes back a failover move readied for another chain when it holds the core the split needs: on the chain's
     * server when it may take another core there, else on a server it could scale out to, and only when no core is
     * free on any of them ({@link ReadiedCores}: the move held it until the suspected server answered or its deadline
     * passed, and the split was refused "no free core"). Caller holds the chain's lock and not the reservation lock (a
     * take-back holds the other chain's lock); the reservation then finds the core free, unless another operation
     * took it meanwhile.
     */
    private void reclaimReadied(Ctx c, String groupId) {
        ReadiedCores readied = moves.readiedCores();
        ChainId id = c.chain.id();
        List<MetronServer> where = new ArrayList<>();
        if (c.placement.value().cores().size() < c.chain.deployment().maxCpuCores()) {
            where.add(c.server);
        }
        if (runner.scalesOut()) {
            where.addAll(ScaleOut.candidates(runner, c.server.id()));
        }
        if (where.stream().allMatch(s -> readied.reclaimable(s.id(), id).isEmpty())) {
            return; // the common case: nothing readied where the split may go
        }
        for (MetronServer s : where) {
            try {
                if (!runner.freeCores(s.id(), runner.resourcesToPlace(s)).isEmpty()) {
                    return; // a core is free already
                }
            } catch (MetronException e) {
                log.debug("Split of {}: {} not asked for its cores: {}", id, s.id(), e.getMessage());
            }
        }
        for (MetronServer s : where) {
            Optional<Integer> core = readied.reclaimable(s.id(), id).keySet().stream().min(Integer::compare);
            if (core.isPresent() && readied.reclaim(s.id(), List.of(core.get()), "a split of group " + groupId
                    + " of chain " + id + " needs it")) {
                return;
            }
        }
    }

    /** What a split changes, once its new group's id, tag and core are known. */
    static final class SplitParts {
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
    static SplitParts withPortShares(SplitParts p, GroupAssignment g, Placement before) {
        return new SplitParts(p.keep.withPortShare(g.portShare()),
                p.added.withPortShare(before.freePortShare(Set.of())), p.retagged, p.superseded, p.moved, p.slice);
    }

    /** Builds a split's parts for the new group's id, tag and core. */
    interface SplitPlan {
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
            throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, e.getMessage()
                    + ": a new group would hand out ports another group of the chain does");
        }
        supersedeReadied(c, groupId, reason, onsetMs, start);
        reclaimReadied(c, groupId);
        timer.lap("readied");
        ScalingOperation op;
        SplitParts parts;
        synchronized (runner.store.reservationLock()) {
            ServerResources res = runner.resourcesToPlace(c.server);
            timer.lap("resources");
            int core = c.placement.value().cores().size() >= c.chain.deployment().maxCpuCores() ? -1
                    : runner.freeCore(c.server.id(), res);
            if (core < 0 && runner.scalesOut()) {
                return scaleOut.reserveRemote(c, g, reason, onsetMs, start, timer, plan, newId);
            }
            if (core < 0) {
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, "no free core on "
                        + c.server.id() + " for a new group of chain " + chainId);
            }
            Tag tag;
            try {
                tag = runner.tags.allocate(c.server.id(), c.placement.value().nic(), g.tag().type(), chainId,
                        List.of(newId), new HashSet<>(res.getTagsInUseList())).get(0);
            } catch (MetronException e) {
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start, e.getMessage());
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
                    .map(r -> new InstalledRule(Role.TRANSIT, RuleRetagger.transitFor(r.rule(), tag, runner.app)))
                    .collect(Collectors.toList());
            long nicRule = installed.nicRuleIds().isEmpty() ? 0 : AgentRequests.nicRuleId(chainId, newId);
            op = new ScalingOperation(Kind.SPLIT, chainId, Step.PIPELINE, groupId, newId, tag, core,
                    parts.moved, c.placement.value(), after, installed, parts.retagged, transit, List.of(), nicRule,
                    reason, onsetMs, start, parts.superseded, parts.slice);
            // write-ahead; from now on the new core counts as reserved for every other placement
            runner.journal.operations().put(chainId, op);
            if (!runner.store.placements().replace(chainId, c.placement.version(), after)) {
                runner.journal.operations().remove(chainId);
                runner.store.tags().remove(new TagKey(tag));
                throw runner.refuse(chainId, Kind.SPLIT, List.of(groupId), reason, onsetMs, start,
                        "chain " + chainId + " changed while the split was prepared");
            }
            timer.lap("reserve");
        }
        log.info("Splitting {} group {}: classes {} {} move to {} ({}, core {})", chainId, groupId, parts.moved,
                parts.slice, newId, op.otherTag(), op.otherCore());
        return runner.runLocal(op, c.server, timer);
    }
}
