package org.metron.app.scaling;

import org.metron.agent.v1.ServerResources;
import org.metron.app.api.ChainId;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.impl.AgentRequests;
import org.metron.app.impl.ChainFence;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.synth.ClassGroup;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.metron.app.scaling.OperationPlans.base;
import static org.metron.app.scaling.OperationPlans.classRules;
import static org.metron.app.scaling.OperationPlans.homePort;
import static org.metron.app.scaling.OperationPlans.withGroups;

/**
 * Merges two groups with the same stateful operations (docs/scaling.md#merge): the retired group's classes and
 * flow state move to the kept group, its tag and core are released; a group on another server comes back to the
 * chain's server (merge back, docs/scaling.md#scale-out).
 */
final class MergeOperation {
    private static final Logger log = LoggerFactory.getLogger(MergeOperation.class);

    private final OperationRunner runner;
    private final RemotePaths paths;

    MergeOperation(OperationRunner runner, RemotePaths paths) {
        this.runner = runner;
        this.paths = paths;
    }

    /**
     * Merges two groups with the same stateful operations: the retired group's classes and flow state move to
     * the kept group; its tag and core are released. The group whose tag marks the chain's egress is always
     * the one kept.
     */
    public ScalingEvent merge(ChainId chainId, String keepId, String retireId, String reason, long onsetMs) {
        synchronized (runner.lock(chainId)) {
            try (ChainFence.Op fence = runner.fence(chainId)) {
                long start = runner.clock.getAsLong();
                StepTimer timer = new StepTimer();
                timer.add("detect", start - onsetMs);
                Ctx c = runner.context(chainId);
                GroupAssignment a = c.group(keepId);
                GroupAssignment b = c.group(retireId);
                if (keepId.equals(retireId)) {
                    throw runner.refuse(chainId, Kind.MERGE, List.of(keepId, retireId), reason, onsetMs, start,
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
                    throw runner.refuse(chainId, Kind.MERGE, List.of(a.groupId(), b.groupId()), reason, onsetMs, start,
                            why);
                }
                ScalingOperation op = mergeOperation(c, a, b, reason, onsetMs, start, true);
                runner.journal.operations().put(chainId, op);
                timer.lap("reserve");
                log.info("Merging {} group {} into {}", chainId, b.groupId(), a.groupId());
                return b.remote() ? runner.runRemote(op, c.server, runner.remoteServer(b).agent(), timer)
                        : runner.runLocal(op, c.server, timer);
            }
        }
    }

    /** Why group {@code b} cannot merge into {@code a} ({@code a} on the chain's server); null when it can. */
    static String mergeRefusal(Ctx c, GroupAssignment a, GroupAssignment b) {
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
        String pinned = PinnedBlackBoxes.refusal(c.chain.json(), bb, "group " + b.groupId() + " cannot merge into "
                + a.groupId());
        if (pinned != null) {
            return pinned;
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
    ScalingOperation mergeOperation(Ctx c, GroupAssignment a, GroupAssignment b, String reason, long onsetMs,
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
        List<InstalledRule> retagged = runner.retag(installed, b.tag(), a.tag(), whole);
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
                            : RuleRetagger.unsliced(r.rule(), cls, j.getValue(), a.tag(), runner.app);
                    byOrigin.computeIfAbsent(u.id(), k -> new ArrayList<>()).add(r);
                    origin.put(u.id(), u);
                }
            }
            for (Map.Entry<Object, List<InstalledRule>> o : byOrigin.entrySet()) {
                if (o.getValue().size() > 1) {
                    superseded.addAll(o.getValue());
                    rejoined.put(o.getKey(), new InstalledRule(Role.OFFLOAD, origin.get(o.getKey())));
                } else if (RuleRetagger.taggedClass(o.getValue().get(0).rule(), b.tag()).isPresent()) {
                    FlowRule moved = RuleRetagger.retagOffload(o.getValue().get(0).rule(), cls, a.tag(), runner.app);
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
        long retiredRule = AgentRequests.nicRuleId(chainId, b.groupId());
        long nicRule = installed.nicRuleIds().contains(retiredRule) ? retiredRule : 0;
        if (b.remote()) {
            // the offload rules leave as the kept group's do; the reply rules as a deployment on the chain's
            // server plans them (the kept group may have none to copy the port from)
            PortNumber home = homePort(installed, a.tag());
            PortNumber replyHome = retagged.stream().anyMatch(r -> r.role() == Role.REPLY)
                    ? paths.homePath(c).towardServer(Role.REPLY) : null;
            retagged = retagged.stream().map(r -> new InstalledRule(r.role(), RuleRetagger.withOutput(r.rule(),
                    r.role() == Role.REPLY ? replyHome : home, runner.app))).collect(Collectors.toList());
            transit = paths.onlyFor(c, b);
            nicRule = farReachable && farHasRuleTable(runner.remoteServer(b), b.nic()) ? retiredRule : 0;
        }
        return new ScalingOperation(Kind.MERGE, chainId, Step.PIPELINE, a.groupId(), b.groupId(), b.tag(), b.core(),
                b.classIds(), c.placement.value(), after, installed, retagged, List.of(), transit, nicRule, reason,
                onsetMs, start, superseded, sliceText.toString());
    }

    /** Whether {@code nic} of {@code s} has a NIC rule table (its resources as last read, else asked now). */
    private boolean farHasRuleTable(MetronServer s, String nic) {
        ServerResources res = runner.resources.fresh(s.id()).orElseGet(() -> runner.calls.await(
                s.agent().getResources(), "reading resources of " + s.agent().target()));
        return res.getNicsList().stream().anyMatch(n -> n.getName().equals(nic) && n.getMaxNicRules() > 0);
    }
}
