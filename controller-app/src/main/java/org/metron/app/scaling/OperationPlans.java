package org.metron.app.scaling;

import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.StepTime;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.impl.ReplyTraffic;
import org.metron.app.impl.AgentRequests;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.instructions.Instructions;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a scaling operation changes, computed from its journal entry ({@link ScalingOperation}) and the chain's
 * compiled form: the rule sets before, during and after it, the agent's group set per step, and the placement's
 * groups. Pure functions: the runner and the operations decide when each is applied.
 */
final class OperationPlans {
    private OperationPlans() {
    }

    /** The group of the operation that runs on another server (a scale-out's new half, a merge's retired one). */
    static Optional<GroupAssignment> remoteGroup(ScalingOperation op) {
        Placement p = op.kind() == Kind.SPLIT ? op.after() : op.before();
        return p.groups().stream().filter(g -> g.groupId().equals(op.other()) && g.remote()).findFirst();
    }

    /** The offload rules tagging class {@code cls} for {@code tag}. */
    static List<InstalledRule> classRules(InstalledState installed, Tag tag, int cls) {
        return installed.switchRules().stream().filter(r -> r.role() == Role.OFFLOAD
                && RuleRetagger.taggedClass(r.rule(), tag).equals(Optional.of(cls))).collect(Collectors.toList());
    }

    /** The slices among {@code g}'s of the classes {@code classes}. */
    static Map<Integer, ClassSlice> slicesOf(GroupAssignment g, List<Integer> classes) {
        Map<Integer, ClassSlice> out = new HashMap<>(g.slices());
        out.keySet().retainAll(classes);
        return out;
    }

    /** "reply class 5 answers [0, 1]; reply class 7 answers [2]", for the reply classes among {@code classes}. */
    static String answering(ReplyTraffic replies, List<Integer> classes) {
        return classes.stream().filter(k -> !replies.answers(k).isEmpty())
                .map(k -> "reply class " + k + " answers forward classes " + replies.answers(k))
                .collect(Collectors.joining("; "));
    }

    static ClassGroup base(CompiledChain cc, String groupId) {
        return AgentRequests.compiledGroup(cc, groupId);
    }

    /** "g3.1", "g3.2", ...: the lowest number free in the placement. */
    static String childId(Placement p, ClassGroup base) {
        Set<String> used = p.groups().stream().map(GroupAssignment::groupId).collect(Collectors.toSet());
        for (int n = 1; ; n++) {
            String id = "g" + base.id() + "." + n;
            if (!used.contains(id)) {
                return id;
            }
        }
    }

    static Placement withGroups(Placement p, List<GroupAssignment> groups) {
        return new Placement(p.chainId(), p.server(), p.nic(), p.egressNic(), p.offloadDevice(), p.offloadProfile(),
                groups);
    }

    /** The re-tagged rules of {@code role} ({@link OperationRunner#retag}). */
    static List<InstalledRule> retagged(ScalingOperation op, Role role) {
        return op.retagged().stream().filter(r -> r.role() == role).collect(Collectors.toList());
    }

    static InstalledState union(ScalingOperation op) {
        return op.kind() == Kind.SPLIT ? union(op.installedBefore(), op.transitAdded(), op.retagged(), localNicRule(op))
                : union(op.installedBefore(), List.of(), op.retagged(), 0);
    }

    /** The operation's NIC rule on the chain's server; 0 when none, or when it is on another server's NIC. */
    static long localNicRule(ScalingOperation op) {
        return remoteGroup(op).isPresent() ? 0 : op.nicRuleId();
    }

    /** The old rules plus every rule the operation may install: what a teardown meanwhile must remove. */
    static InstalledState union(InstalledState s, List<InstalledRule> added, List<InstalledRule> retagged,
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
    static InstalledState finalInstalled(ScalingOperation op, boolean repliesRetagged) {
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
    static NicRule newNicRule(ScalingOperation op) {
        return AgentRequests.nicRules(op.chain(), op.after()).stream().filter(r -> r.getId() == op.nicRuleId())
                .findFirst().orElseThrow(() -> new MetronException(Fault.INTERNAL, "placement " + op.after()
                        + " has no NIC rule for group " + op.other()));
    }

    /**
     * The first pipeline update: split — both halves start from the group's state; merge — the kept group gets
     * both states and keeps its class list (a class may belong to one group only; packets of classes a group
     * does not list are processed all the same, only counted as unknown until the sync step).
     */
    static UpdatePipelineRequest firstUpdate(ScalingOperation op, CompiledChain cc) {
        return op.kind() == Kind.SPLIT
                ? pipeline(op, cc, op.after(), Map.of(op.group(), List.of(op.group()), op.other(),
                        List.of(op.group())))
                : pipeline(op, cc, op.before(), Map.of(op.group(), List.of(op.group(), op.other())), op.after());
    }

    /** The full group set of {@code p} as an UpdatePipeline request, with state sources per group. */
    static UpdatePipelineRequest pipeline(ScalingOperation op, CompiledChain cc, Placement p,
                                                  Map<String, List<String>> stateFrom) {
        return pipeline(op, cc, p, stateFrom, p);
    }

    /**
     * @param target the placement whose slices say which flows each group takes from its sources: a merge's
     *               kept group, still holding its half, takes the whole of the class it will hold
     */
    static UpdatePipelineRequest pipeline(ScalingOperation op, CompiledChain cc, Placement p,
                                                  Map<String, List<String>> stateFrom, Placement target) {
        UpdatePipelineRequest.Builder req = UpdatePipelineRequest.newBuilder().setPipelineId(op.chain().name());
        for (GroupAssignment g : p.localGroups()) {
            List<String> from = stateFrom.getOrDefault(g.groupId(), List.of());
            GroupSpec.Builder spec = AgentRequests.groupSpec(base(cc, g.groupId()), g).addAllStateFrom(from);
            GroupAssignment t = target.groups().stream().filter(x -> x.groupId().equals(g.groupId())).findFirst()
                    .orElse(g);
            if (!from.isEmpty() && t.classIds().size() == 1 && !t.slices().isEmpty()) {
                // a group holding one slice of one class needs its sources' flows of that slice only
                spec.setStateFilter(AgentRequests.portBits(t.slice(t.classIds().get(0))));
            }
            req.addGroups(spec);
        }
        return req.build();
    }

    /** The port the offload rules tagging for {@code tag} leave the offload device through. */
    static PortNumber homePort(InstalledState installed, Tag tag) {
        return installed.switchRules().stream().filter(r -> r.role() == Role.OFFLOAD
                        && RuleRetagger.taggedClass(r.rule(), tag).isPresent())
                .flatMap(r -> r.rule().treatment().allInstructions().stream())
                .filter(i -> i instanceof Instructions.OutputInstruction)
                .map(i -> ((Instructions.OutputInstruction) i).port()).findFirst()
                .orElseThrow(() -> new MetronException(Fault.INTERNAL, "no offload rule tags for " + tag));
    }

    /** The slice of flows a scaled-out group holds: its class slice when it holds one slice of one class. */
    static ClassSlice stateSlice(GroupAssignment g) {
        return g.classIds().size() == 1 ? g.slice(g.classIds().get(0)) : ClassSlice.WHOLE;
    }

    /**
     * The agent's own account of an update (PipelineStatus.steps), e.g. "; in the agent 14.2: wait 0.0 + build
     * 5.1 + ...": what of the call's time the agent spent, and on what; "" when it reports none.
     */
    static String agentSteps(PipelineStatus status) {
        if (status == null || status.getStepsCount() == 0) {
            return "";
        }
        long total = status.getStepsList().stream().mapToLong(StepTime::getMicros).sum();
        return String.format(Locale.ROOT, "; in the agent %.1f: ", total / 1000.0) + status.getStepsList().stream()
                .map(t -> String.format(Locale.ROOT, "%s %.1f", t.getName(), t.getMicros() / 1000.0))
                .collect(Collectors.joining(" + "));
    }
}
