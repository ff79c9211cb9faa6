package org.metron.app.scaling;

import org.metron.agent.v1.ServerResources;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.impl.AgentRequests;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.TagKey;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.metron.app.scaling.OperationPlans.withGroups;

/**
 * Step 1 of a scale-out (docs/scaling.md#scale-out): a split whose new half finds no free core on the chain's
 * server goes to another server reachable from the offload device, with the rules that carry its traffic there
 * and back; then the runner takes it with {@link RemoteSteps}.
 */
final class ScaleOut {
    private static final Logger log = LoggerFactory.getLogger(ScaleOut.class);

    private final OperationRunner runner;
    private final RemotePaths paths;
    private final java.util.Random random;

    ScaleOut(OperationRunner runner, RemotePaths paths, java.util.Random random) {
        this.runner = runner;
        this.paths = paths;
        this.random = java.util.Objects.requireNonNull(random);
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
    ScalingEvent reserveRemote(Ctx c, GroupAssignment g, String reason, long onsetMs, long start,
                                       StepTimer timer, SplitOperation.SplitPlan plan, String newId) {
        Placement before = c.placement.value();
        ChainId chainId = before.chainId();
        // a server already running a group of the chain takes another into the same pipeline
        List<MetronServer> candidates = candidates(runner, c.server.id());
        java.util.Collections.shuffle(candidates, random);
        MetronServer best = null;
        ServerResources bestRes = null;
        int bestFree = 0;
        // why each server asked took nothing, for the refusal: its cores as the agent reports them (the chain each
        // runs) and the store holds them, or the error that kept it out
        List<String> why = new ArrayList<>();
        for (MetronServer s : candidates.subList(0, Math.min(2, candidates.size()))) {
            try {
                ServerResources r = runner.resourcesToPlace(s);
                int free = runner.freeCores(s.id(), r).size();
                if (free > bestFree) {
                    best = s;
                    bestRes = r;
                    bestFree = free;
                }
                why.add(s.id() + ": cores " + r.getCoresList().stream().map(k -> k.getId() + "=" + (!k.getAvailable()
                        ? "unavailable" : k.getPipelineId().isEmpty() ? "idle" : k.getPipelineId()))
                        .collect(Collectors.toList()) + ", " + free + " free once the store's placements and "
                        + "operations are counted");
            } catch (MetronException e) {
                log.warn("Scale-out of {}: server {} not considered: {}", chainId, s.id(), e.getMessage());
                why.add(s.id() + ": not considered: " + e.getMessage());
            }
        }
        timer.lap("servers");
        if (best == null) {
            throw runner.refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start, "no free core on "
                    + c.server.id() + " for a new group of chain " + chainId + ", and none on "
                    + (candidates.isEmpty() ? "another server (none reachable and not drained)"
                    : "servers " + candidates.stream().limit(2).map(MetronServer::id).collect(Collectors.toList())
                    + " (" + String.join("; ", why) + ")"));
        }
        MetronServer remote = best;
        int core = runner.freeCores(remote.id(), bestRes).get(0);
        String nic = nicOf(remote, before.nic());
        String egressNic = nicOf(remote, before.egressNic());
        Tag tag;
        try {
            tag = runner.tags.allocate(remote.id(), nic, g.tag().type(), chainId, List.of(newId),
                    new HashSet<>(bestRes.getTagsInUseList())).get(0);
        } catch (MetronException e) {
            throw runner.refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start, e.getMessage());
        }
        SplitOperation.SplitParts parts = SplitOperation.withPortShares(plan.parts(newId, tag, core), g, before);
        GroupAssignment moved = parts.added.onServer(remote.id(), nic, egressNic);
        List<InstalledRule> retagged;
        RulePlanner.RemotePath path;
        try {
            before.offloadDevice().orElseThrow(() -> new MetronException(Fault.IMPOSSIBLE_PLACEMENT,
                    "chain " + chainId + " has no offload device to re-tag at"));
            path = paths.pathTo(c, remote, moved);
            // offload rules leave the offload device toward it, reply rules the egress point's device
            retagged = parts.retagged.stream().map(r -> RuleRetagger.taggedClass(r.rule(), tag).isPresent()
                    ? new InstalledRule(r.role(), RuleRetagger.withOutput(r.rule(), path.towardServer(r.role()),
                            runner.app))
                    : r).collect(Collectors.toList());
        } catch (MetronException e) {
            runner.store.tags().remove(new TagKey(tag));
            throw runner.refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start, e.getMessage());
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
                ruleTable ? AgentRequests.nicRuleId(chainId, newId) : 0, reason,
                onsetMs, start, parts.superseded, parts.slice);
        runner.journal.operations().put(chainId, op);
        if (!runner.store.placements().replace(chainId, c.placement.version(), after)) {
            runner.journal.operations().remove(chainId);
            runner.store.tags().remove(new TagKey(tag));
            throw runner.refuse(chainId, Kind.SPLIT, List.of(g.groupId()), reason, onsetMs, start,
                    "chain " + chainId + " changed while the scale-out was prepared");
        }
        timer.lap("reserve");
        log.info("Scaling out {} group {}: classes {} {} move to {} on {} ({}, core {})", chainId, g.groupId(),
                parts.moved, parts.slice, newId, remote.id(), tag, core);
        return runner.runRemote(op, c.server, remote.agent(), timer);
    }

    /** The servers a chain on {@code home} may scale out to: cabled, not drained (a drained one takes nothing). */
    static List<MetronServer> candidates(OperationRunner runner, DeviceId home) {
        return runner.servers.servers().stream()
                .filter(s -> !s.id().equals(home) && !s.attachments().isEmpty() && !runner.store.isDrained(s.id()))
                .collect(Collectors.toCollection(ArrayList::new));
    }

    /** {@code wanted} when the server has a NIC of that name, else its first cabled NIC. */
    private static String nicOf(MetronServer s, String wanted) {
        return s.attachment(wanted).isPresent() ? wanted : new TreeSet<>(s.attachments().keySet()).first();
    }
}
