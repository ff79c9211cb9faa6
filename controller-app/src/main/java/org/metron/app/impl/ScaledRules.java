package org.metron.app.impl;

import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.store.InstalledRule;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The switch rules of a chain as scaling left it (split, class-split, scaled-out and merged groups,
 * docs/scaling.md), planned afresh for another offload device or path (a reroute, a failover backup). The planner
 * knows the compiled groups only, so the chain is planned with its {@link #basis}: per compiled group, one placed
 * group of it on the chain's server holding all its classes. The plan's offload and reply rules are then re-tagged
 * as the scaling operations re-tagged the installed ones ({@link RuleRetagger}): each to the placed group holding
 * its class, or divided by source-port bits between the groups holding slices of the class; the other groups on the
 * chain's server get transit rules along the same hops, and a group on another server its path there and back
 * ({@link RulePlanner#remotePath}), the offload and reply rules tagging for it leaving toward it. For a placement
 * scaling never changed the result is the plan itself. Pure.
 */
final class ScaledRules {
    private ScaledRules() {
    }

    /**
     * The placement to plan with: {@code p} with, per compiled group (in compiled order, as the planner reads
     * them), its first placed group on the chain's server, holding all the compiled group's classes.
     *
     * @throws MetronException IMPOSSIBLE_PLACEMENT when the placed groups of a compiled group do not hold exactly
     *                         its classes (another profile's compilation groups them otherwise)
     */
    static Placement basis(Placement p, CompiledChain cc) {
        List<GroupAssignment> groups = new ArrayList<>();
        for (ClassGroup cg : cc.groups()) {
            List<GroupAssignment> of = p.groups().stream()
                    .filter(g -> AgentRequests.compiledGroup(cc, g.groupId()) == cg).collect(Collectors.toList());
            Set<Integer> held = new HashSet<>();
            of.forEach(g -> held.addAll(g.classIds()));
            GroupAssignment first = of.stream().filter(g -> !g.remote()).findFirst().orElse(null);
            if (first == null || !held.equals(new HashSet<>(cg.classIds()))) {
                throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + p.chainId() + ": compiled group "
                        + ChainBringUp.groupId(cg) + " has classes " + cg.classIds() + ", its placed groups "
                        + of.stream().map(GroupAssignment::groupId).collect(Collectors.toList()) + " hold " + held
                        + (first == null ? " and none is on the chain's server" : "") + "; resubmit the chain");
            }
            groups.add(new GroupAssignment(first.groupId(), first.tag(), first.core(), cg.classIds()));
        }
        return new Placement(p.chainId(), p.server(), p.nic(), p.egressNic(), p.offloadDevice(), p.offloadProfile(),
                groups);
    }

    /**
     * @param plan          the plan of {@code basis}, offload device last
     * @param offloadDevice the plan's offload device
     * @param placed        the placement as scaled (same server, NICs, offload device and profile)
     * @param remotePath    the path to and from a group on another server
     * @return every switch rule per device, in install order (offload device last)
     */
    static Map<DeviceId, List<InstalledRule>> of(DeploymentPlan plan, Placement basis, Placement placed,
                                                 DeviceId offloadDevice,
                                                 Function<GroupAssignment, RulePlanner.RemotePath> remotePath,
                                                 ApplicationId app) {
        Set<Tag> basisTags = basis.groups().stream().map(GroupAssignment::tag).collect(Collectors.toSet());
        List<GroupAssignment> otherLocal = placed.localGroups().stream().filter(g -> !basisTags.contains(g.tag()))
                .collect(Collectors.toList());
        Map<GroupAssignment, RulePlanner.RemotePath> paths = new LinkedHashMap<>();
        placed.groups().stream().filter(GroupAssignment::remote).forEach(g -> paths.put(g, remotePath.apply(g)));

        Map<DeviceId, Map<Object, InstalledRule>> out = new LinkedHashMap<>();
        for (Map.Entry<DeviceId, List<InstalledRule>> e : plan.switchRules().entrySet()) {
            Map<Object, InstalledRule> rules = out.computeIfAbsent(e.getKey(), k -> new LinkedHashMap<>());
            for (InstalledRule r : e.getValue()) {
                if (r.role() == Role.OFFLOAD || r.role() == Role.REPLY) {
                    retagged(r, basis, placed, paths, app).forEach(x -> rules.putIfAbsent(x.rule().id(), x));
                    continue;
                }
                rules.putIfAbsent(r.rule().id(), r);
                // the groups on the chain's server share its NIC: the same hops as the first group's
                if (r.role() == Role.TRANSIT && !basis.groups().isEmpty()
                        && RuleRetagger.matchesGroup(r.rule(), basis.groups().get(0).tag())) {
                    otherLocal.forEach(g -> {
                        FlowRule t = RuleRetagger.transitFor(r.rule(), g.tag(), app);
                        rules.putIfAbsent(t.id(), new InstalledRule(Role.TRANSIT, t));
                    });
                }
            }
        }
        Map<Object, InstalledRule> last = out.remove(offloadDevice);
        paths.values().forEach(p -> p.rules().forEach(r -> (r.rule().deviceId().equals(offloadDevice) ? last
                : out.computeIfAbsent(r.rule().deviceId(), k -> new LinkedHashMap<>()))
                .putIfAbsent(r.rule().id(), r)));
        if (last != null) {
            out.put(offloadDevice, last);
        }
        Map<DeviceId, List<InstalledRule>> ordered = new LinkedHashMap<>();
        out.forEach((dev, rules) -> ordered.put(dev, new ArrayList<>(rules.values())));
        return ordered;
    }

    /** An offload or reply rule of the basis as the placed groups holding its class need it. */
    private static List<InstalledRule> retagged(InstalledRule r, Placement basis, Placement placed,
                                                Map<GroupAssignment, RulePlanner.RemotePath> paths,
                                                ApplicationId app) {
        for (GroupAssignment b : basis.groups()) {
            Optional<Integer> tagged = RuleRetagger.taggedClass(r.rule(), b.tag());
            if (tagged.isEmpty()) {
                continue;
            }
            int cls = tagged.get();
            List<InstalledRule> out = new ArrayList<>();
            for (GroupAssignment h : placed.groups()) {
                if (!h.classIds().contains(cls)) {
                    continue;
                }
                FlowRule f = forSlice(r.rule(), cls, h.slice(cls), b.tag(), h.tag(), app);
                if (f != null) {
                    out.add(new InstalledRule(r.role(), h.remote()
                            ? RuleRetagger.withOutput(f, paths.get(h).towardServer(r.role()), app) : f));
                }
            }
            // no placed group lists the class (the unclassified class of a classifying group): as planned
            return out.isEmpty() ? List.of(r) : out;
        }
        return List.of(r);
    }

    /**
     * The part of {@code rule}'s packets in slice {@code s}, tagged for {@code to}; null when none. As a class
     * split divides rules: a rule whose packets lie in one slice goes whole to it, one matching neither TCP nor UDP
     * stays with the slice of source port 0 (the half with the bit clear, which keeps it), any other is divided.
     */
    private static FlowRule forSlice(FlowRule rule, int cls, ClassSlice s, Tag from, Tag to, ApplicationId app) {
        Optional<ClassSlice> have = RuleRetagger.sportBits(rule);
        boolean whole = s.isWhole() || (have.isEmpty() ? s.contains(0)
                : !have.get().disjoint(s) && (s.mask() & ~have.get().mask()) == 0);
        if (whole) {
            return to.equals(from) ? rule : RuleRetagger.retagOffload(rule, cls, to, app);
        }
        if (have.isEmpty() || have.get().disjoint(s)) {
            return null;
        }
        return RuleRetagger.withSport(rule, cls, new ClassSlice(have.get().mask() | s.mask(),
                have.get().value() | s.value()), to, app);
    }
}
