package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.ImportStateReply;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * Moves a deployed chain to a new version without stopping it (docs/updates.md): the new version runs beside the
 * old one (new groups with new tags: on the same server in the same agent pipeline, by UpdatePipeline with the old
 * groups kept; on another server, as its own pipeline), takes the flow state of the old version's unchanged
 * elements ({@link StateCarry}), then the switches move traffic to it (each device one atomic batch; the devices
 * where traffic enters last, their new rules and the removal of old entry rules in the same batch), and only then
 * is the old version removed. Until traffic moves, any failure undoes what the new version installed and leaves the
 * old one exactly as it ran.
 */
final class MakeBeforeBreak {
    private static final Logger log = LoggerFactory.getLogger(MakeBeforeBreak.class);

    /** How long the old version keeps running after traffic moved (see {@link #drain}). */
    static final long DRAIN_MS = 100;

    private final Deployer deployer;

    MakeBeforeBreak(Deployer deployer) {
        this.deployer = Objects.requireNonNull(deployer);
    }

    /** The running version: what it installed, its agent and its pipeline as the agent holds it. */
    static final class Running {
        final InstalledState installed;
        final Optional<MetronServer> server;
        final DeployPipelineRequest pipeline;

        /**
         * @param pipeline the old pipeline request (null without server): its groups are what the agent runs
         */
        Running(InstalledState installed, Optional<MetronServer> server, DeployPipelineRequest pipeline) {
            this.installed = Objects.requireNonNull(installed);
            this.server = Objects.requireNonNull(server);
            this.pipeline = pipeline;
        }
    }

    /** What an update did. */
    static final class Result {
        final InstalledState installed;
        final long carried;
        final long synced;
        final List<String> left;
        final List<String> steps;
        /** Old groups a new one took state from but could not follow (another core): "g0 -> g0~v5". */
        final List<String> unfollowed;

        Result(InstalledState installed, long carried, long synced, List<String> left, List<String> steps,
               List<String> unfollowed) {
            this.installed = installed;
            this.carried = carried;
            this.synced = synced;
            this.left = List.copyOf(left);
            this.steps = List.copyOf(steps);
            this.unfollowed = List.copyOf(unfollowed);
        }
    }

    /**
     * Runs the update.
     *
     * @throws MetronException before traffic moved: everything of the new version was undone (the message says
     *                         if some undo failed); the old version runs as before
     */
    Result run(ChainId chain, Running old, DeploymentPlan plan, StateCarry carry) {
        Deque<Deployer.Undo> undo = new ArrayDeque<>();
        List<String> steps = new ArrayList<>();
        Optional<MetronServer> server = plan.server();
        boolean samePipeline = server.isPresent() && old.server.isPresent()
                && server.get().id().equals(old.server.get().id());
        List<SwitchProgrammer.Staged> staged = new ArrayList<>();
        List<String> unfollowed = new ArrayList<>();
        long carried;
        try {
            // 1. the new version beside the old one
            if (server.isPresent()) {
                AgentClient agent = server.get().agent();
                if (!plan.nicRules().isEmpty()) {
                    deployer.calls().await(AgentCalls.started(() -> agent.installNicRules(NicRuleBatch.newBuilder()
                            .addAllRules(plan.nicRules()).build())), Fault.AGENT_FAILURE, "installing "
                            + plan.nicRules().size() + " NIC rules of the new version on " + agent.target());
                    List<Long> ids = plan.nicRules().stream().map(r -> r.getId()).collect(Collectors.toList());
                    undo.push(new Deployer.Undo("new NIC rules " + ids,
                            () -> AgentCalls.removeNicRulesPresent(agent, ids)));
                }
                if (samePipeline) {
                    UpdatePipelineRequest both = UpdatePipelineRequest.newBuilder().setPipelineId(chain.name())
                            .addAllGroups(old.pipeline.getGroupsList()).addAllGroups(plan.pipeline().getGroupsList())
                            .addAllEgress(plan.pipeline().getEgressList()).build();
                    requireRunning(deployer.calls().build(agent, AgentCalls.started(() -> agent.updatePipeline(both)),
                            Fault.AGENT_FAILURE, "starting the new version's groups beside the old ones in pipeline "
                            + chain + " on " + agent.target()), agent);
                    UpdatePipelineRequest back = UpdatePipelineRequest.newBuilder().setPipelineId(chain.name())
                            .addAllGroups(old.pipeline.getGroupsList()).addAllEgress(old.pipeline.getEgressList())
                            .build();
                    undo.push(new Deployer.Undo("new groups of " + chain + " on " + agent.target(),
                            () -> agent.updatePipeline(back)));
                    steps.add("groups started beside the old ones");
                } else {
                    requireRunning(deployer.calls().build(agent,
                            AgentCalls.started(() -> agent.deployPipeline(plan.pipeline())), Fault.AGENT_FAILURE,
                            "deploying the new version of " + chain + " on " + agent.target()), agent);
                    undo.push(new Deployer.Undo("new pipeline " + chain + " on " + agent.target(),
                            () -> AgentCalls.removePipelinePresent(agent, chain.name())));
                    steps.add("pipeline started on " + server.get().id());
                }
            }
            // 2. flow state of unchanged elements; the new groups follow the old ones from here on
            carried = copyState(chain, old, server, carry, false, samePipeline ? plan.pipeline() : null,
                    unfollowed);
            steps.add("state carried: " + carried + " flows");
            // 3. switch rules: checked everywhere first, then live device by device, entry devices last
            Map<DeviceId, List<FlowRule>> adds = new LinkedHashMap<>();
            plan.switchRules().forEach((dev, rules) -> adds.put(dev, rules.stream().map(InstalledRule::rule)
                    .collect(Collectors.toList())));
            Set<Object> newEntries = Deployer.entries(plan.allSwitchRules());
            Map<DeviceId, List<FlowRule>> moved = entryRulesToRemove(old.installed, newEntries, adds.keySet());
            List<CompletableFuture<SwitchProgrammer.Staged>> staging = new ArrayList<>();
            adds.forEach((dev, rules) -> staging.add(deployer.stageOn(dev, rules,
                    moved.getOrDefault(dev, List.of()))));
            int i = 0;
            for (Map.Entry<DeviceId, List<FlowRule>> e : adds.entrySet()) {
                staged.add(deployer.calls().await(staging.get(i++), Fault.SWITCH_FAILURE, "staging "
                        + e.getValue().size() + " rules of the new version on " + e.getKey()));
            }
            Set<Object> oldEntries = Deployer.entries(old.installed.switchRules());
            i = 0;
            for (Map.Entry<DeviceId, List<FlowRule>> e : adds.entrySet()) {
                DeviceId dev = e.getKey();
                SwitchProgrammer.Staged s = staged.set(i++, null);
                deployer.calls().await(s.commit(), Fault.SWITCH_FAILURE, "moving " + chain + " on " + dev + " ("
                        + e.getValue().size() + " rules, " + moved.getOrDefault(dev, List.of()).size()
                        + " old entry rules removed)");
                List<FlowRule> before = rulesOn(old.installed, dev);
                List<FlowRule> fresh = e.getValue().stream().filter(r -> !oldEntries.contains(Deployer.entry(r)))
                        .collect(Collectors.toList());
                undo.push(new Deployer.Undo("rules of " + chain + " on " + dev, () -> deployer.stageOn(dev, before,
                        fresh).thenCompose(SwitchProgrammer.Staged::commit)));
                steps.add(dev + ": " + e.getValue().size() + " rules live, " + moved.getOrDefault(dev, List.of())
                        .size() + " old entry rules gone, one batch");
            }
        } catch (MetronException e) {
            deployer.discard(staged);
            List<String> failedUndo = deployer.rollback(undo);
            throw new MetronException(e.fault(), e.getMessage() + "; the running version is untouched"
                    + (failedUndo.isEmpty() ? " (the new one was rolled back)"
                    : " (rollback of the new one incomplete: " + failedUndo + ")"), e);
        }
        // traffic moved: from here on nothing goes back; what cannot be removed is reported
        List<String> left = new ArrayList<>();
        drain();
        long synced = 0;
        try {
            synced = copyState(chain, old, server, carry, true, null, new ArrayList<>());
            steps.add("window flows synced: " + synced);
        } catch (MetronException e) {
            left.add("state sync after the move: " + e.getMessage());
        }
        left.addAll(retire(chain, old, plan, samePipeline));
        left.addAll(deployer.removeStale(old.installed, Deployer.entries(plan.allSwitchRules())));
        // a deposed instance's retirement was refused: the chain's records are its new owner's to write
        ChainFence.check("recording the update of " + chain);
        log.info("Chain {} updated make-before-break: {}{}", chain, steps, left.isEmpty() ? "" : "; left: " + left);
        InstalledState now = new InstalledState(chain, server.map(MetronServer::id), plan.allSwitchRules(),
                plan.nicRules().stream().map(r -> r.getId()).collect(Collectors.toList()), server.isPresent());
        return new Result(now, carried, synced, left, steps, unfollowed);
    }

    /**
     * Frames the old rules tagged just before the move are still on their way to the old groups (switch queues, the
     * agent's rx rings): they get this long before the old groups retire.
     */
    private static void drain() {
        try {
            Thread.sleep(DRAIN_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void requireRunning(PipelineStatus status, AgentClient agent) {
        if (status.getState() == PipelineState.PIPELINE_FAILED) {
            throw new MetronException(Fault.AGENT_FAILURE, "agent " + agent.target() + " reports pipeline "
                    + status.getPipelineId() + " FAILED: " + status.getMessage());
        }
    }

    /**
     * Copies the carried tables from the old groups into the new ones: the first source replaces a new group's
     * tables, later ones merge in; {@code sync} merges everything (flows the old groups mapped after the first copy
     * that never reached a new group, a flow the new group already holds keeping its mapping).
     * <p>
     * With {@code beside} (the new version's groups, running in the old version's agent pipeline) each new group
     * also follows the old groups it copies from on its own core: a flow it misses is looked up in theirs until they
     * retire (agent.proto ImportStateRequest.follow_source). That closes the window between this copy and the move:
     * a flow an old group maps meanwhile keeps its mapping when its frames reach the new group, where without it the
     * new group would give it a second one (its own port share) before the sync. Sources on another core cannot be
     * followed: they are named in {@code unfollowed}.
     *
     * @return flows imported
     */
    private long copyState(ChainId chain, Running old, Optional<MetronServer> server, StateCarry carry,
                           boolean sync, DeployPipelineRequest beside, List<String> unfollowed) {
        if (carry.sources().isEmpty() || server.isEmpty() || old.server.isEmpty()) {
            return 0;
        }
        AgentClient from = old.server.get().agent();
        AgentClient to = server.get().agent();
        Map<String, StateSnapshot> exported = new HashMap<>();
        for (String g : carry.oldGroups()) {
            exported.put(g, deployer.calls().await(AgentCalls.started(() -> from.exportState(chain.name(), g)),
                    Fault.AGENT_FAILURE, "exporting the flow state of " + chain + " group " + g + " from "
                    + from.target()));
        }
        long n = 0;
        for (Map.Entry<String, List<StateCarry.Source>> e : carry.sources().entrySet()) {
            boolean merge = sync;
            for (StateCarry.Source src : e.getValue()) {
                StateSnapshot part = StateCarry.carried(exported.get(src.oldGroup()), src, chain.name());
                if (part.getTablesCount() == 0) {
                    continue;
                }
                Optional<Integer> srcCore = core(old.pipeline, src.oldGroup());
                boolean follow = beside != null && srcCore.isPresent() && srcCore.equals(core(beside, e.getKey()));
                if (beside != null && !follow) {
                    unfollowed.add(src.oldGroup() + " -> " + e.getKey());
                }
                ImportStateRequest req = ImportStateRequest.newBuilder().setSnapshot(part)
                        .setTargetGroupId(e.getKey()).setMerge(merge).setFollowSource(follow).build();
                ImportStateReply r = deployer.calls().build(to, AgentCalls.started(() -> to.importState(req)),
                        Fault.AGENT_FAILURE, "importing " + src + " of " + chain + " into group " + e.getKey()
                        + " on " + to.target());
                n += r.getEntries();
                merge = true;
            }
        }
        return n;
    }

    private static Optional<Integer> core(DeployPipelineRequest pipeline, String group) {
        return pipeline.getGroupsList().stream().filter(g -> g.getGroupId().equals(group)).findFirst()
                .map(g -> g.getCore());
    }

    /**
     * Old rules that classify traffic into the old version where it enters (offload and reply rules) and that the
     * new version does not overwrite: they go in the same batch that makes the new rules live on their device.
     */
    static Map<DeviceId, List<FlowRule>> entryRulesToRemove(InstalledState old, Set<Object> newEntries,
                                                            Set<DeviceId> newDevices) {
        Map<DeviceId, List<FlowRule>> out = new LinkedHashMap<>();
        for (InstalledRule r : old.switchRules()) {
            boolean entry = r.role() == Role.OFFLOAD || r.role() == Role.REPLY;
            if (entry && newDevices.contains(r.rule().deviceId()) && !newEntries.contains(Deployer.entry(r.rule()))) {
                out.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r.rule());
            }
        }
        return out;
    }

    private static List<FlowRule> rulesOn(InstalledState st, DeviceId dev) {
        return st.switchRules().stream().map(InstalledRule::rule).filter(r -> r.deviceId().equals(dev))
                .collect(Collectors.toList());
    }

    /** Retires the old version on its agent: its groups (or pipeline) and its NIC rules. */
    private List<String> retire(ChainId chain, Running old, DeploymentPlan plan, boolean samePipeline) {
        Deque<Deployer.Undo> removals = new ArrayDeque<>();
        if (old.server.isPresent()) {
            AgentClient agent = old.server.get().agent();
            if (!old.installed.nicRuleIds().isEmpty()) {
                removals.push(new Deployer.Undo("old NIC rules on " + agent.target(),
                        () -> AgentCalls.removeNicRulesPresent(agent, old.installed.nicRuleIds())));
            }
            if (samePipeline) {
                UpdatePipelineRequest only = UpdatePipelineRequest.newBuilder().setPipelineId(chain.name())
                        .addAllGroups(plan.pipeline().getGroupsList()).build();
                removals.push(new Deployer.Undo("old groups of " + chain + " on " + agent.target(),
                        () -> agent.updatePipeline(only)));
            } else if (old.installed.pipeline()) {
                removals.push(new Deployer.Undo("old pipeline " + chain + " on " + agent.target(),
                        () -> AgentCalls.removePipelinePresent(agent, chain.name())));
            }
        }
        return deployer.rollback(removals);
    }
}
