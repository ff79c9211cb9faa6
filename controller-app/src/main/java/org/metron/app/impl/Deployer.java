package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Applies a {@link DeploymentPlan} as one operation: NIC rules, then the pipeline, then switch rules device by
 * device (offload device last). Each completed step pushes its inverse; the first failure runs every inverse in
 * reverse order, so a failed deployment leaves servers and switches exactly as before.
 */
public final class Deployer {
    private static final Logger log = LoggerFactory.getLogger(Deployer.class);

    private final SwitchProgrammer switches;
    private final AgentCalls calls;

    /**
     * @param timeout how long one step (one agent call, one device batch) may take
     */
    public Deployer(SwitchProgrammer switches, Duration timeout) {
        // every rule write of a chain operation is checked against the term it started with (ChainFence)
        this.switches = FencedSwitches.of(switches);
        this.calls = new AgentCalls(timeout);
    }

    SwitchProgrammer switches() {
        return switches;
    }

    /** The outcome of a successful deployment. */
    public static final class Result {
        private final InstalledState installed;
        private final boolean running;

        Result(InstalledState installed, boolean running) {
            this.installed = installed;
            this.running = running;
        }

        public InstalledState installed() {
            return installed;
        }

        /** Whether the agent reported the pipeline RUNNING (else still starting). */
        public boolean running() {
            return running;
        }
    }

    /** A step to undo, named for the error message when the undo itself fails. */
    static final class Undo {
        final String what;
        final Supplier<CompletableFuture<?>> action;

        Undo(String what, Supplier<CompletableFuture<?>> action) {
            this.what = what;
            this.action = action;
        }
    }

    /**
     * Deploys everything or nothing. The agent calls go out first; while the agent starts the pipeline, each
     * device's switch rules are staged (translated, shipped and checked by the device, not yet live); once the
     * pipeline runs they are committed device by device in plan order, so no packet is steered toward the server
     * before its pipeline and the path to it exist.
     *
     * @throws MetronException AGENT_FAILURE or SWITCH_FAILURE naming the step; everything was rolled back
     */
    public Result deploy(DeploymentPlan plan) {
        return deploy(plan, plan.server().map(s -> start(plan.chainId(), s, plan.nicRules(), plan.pipeline())));
    }

    /**
     * Starts the agent's part of a deployment (NIC rules, then the pipeline) without waiting for it, so the
     * caller can plan switch rules meanwhile; hand it to {@link #deploy(DeploymentPlan, Optional)} with the plan
     * built for the same rules and pipeline, or {@link ServerStart#abandon} it.
     */
    public ServerStart start(ChainId chain, MetronServer server, List<NicRule> nicRules,
                             DeployPipelineRequest pipeline) {
        return new ServerStart(chain, server.agent(), nicRules, pipeline);
    }

    /**
     * {@link #deploy(DeploymentPlan)} with the agent's part already started by {@link #start} for the plan's
     * NIC rules and pipeline (empty for a chain without server).
     */
    public Result deploy(DeploymentPlan plan, Optional<ServerStart> started) {
        return deploy(plan, started, false);
    }

    /**
     * {@link #deploy(DeploymentPlan, Optional)}; {@code atOnce}: every device's switch rules are committed together
     * instead of device by device (offload device last). For a chain moving off a dead server: no packet reaches it
     * until all are in either way, and each device's commit is a round of its own in an ONOS cluster.
     */
    public Result deploy(DeploymentPlan plan, Optional<ServerStart> started, boolean atOnce) {
        if (plan.server().isPresent() != started.isPresent()) {
            started.ifPresent(ServerStart::abandon);
            throw new MetronException(Fault.INTERNAL, "chain " + plan.chainId() + ": the agent's part was "
                    + (started.isPresent() ? "started for a plan without server" : "not started for a plan with one"));
        }
        Deque<Undo> undo = new ArrayDeque<>();
        List<SwitchProgrammer.Staged> staged = new ArrayList<>();
        ChainId chain = plan.chainId();
        ServerStart server = started.orElse(null);
        try {
            long t0 = System.nanoTime();
            List<Map.Entry<DeviceId, List<FlowRule>>> batches = new ArrayList<>();
            List<CompletableFuture<SwitchProgrammer.Staged>> staging = new ArrayList<>();
            for (Map.Entry<DeviceId, List<InstalledRule>> e : plan.switchRules().entrySet()) {
                List<FlowRule> rules = e.getValue().stream().map(InstalledRule::rule).collect(Collectors.toList());
                batches.add(Map.entry(e.getKey(), rules));
                staging.add(stageOn(e.getKey(), rules));
            }
            MetronException stageFailure = null;
            for (int i = 0; i < staging.size(); i++) {
                try {
                    staged.add(calls.await(staging.get(i), Fault.SWITCH_FAILURE, "staging "
                            + batches.get(i).getValue().size() + " rules on " + batches.get(i).getKey()));
                } catch (MetronException e) {
                    stageFailure = stageFailure == null ? e : stageFailure;
                    staged.add(null);
                }
            }
            long t1 = System.nanoTime();
            ServerStart waiting = server;
            server = null; // from here on its steps are in undo
            boolean running = waiting == null || waiting.finish(undo);
            if (stageFailure != null) {
                throw stageFailure;
            }
            StringBuilder timing = new StringBuilder("switch rules staged ").append(ms(t0, t1))
                    .append(" ms, agent ready ").append(ms(t0, System.nanoTime())).append(" ms");
            List<CompletableFuture<Void>> committing = new ArrayList<>();
            if (atOnce) {
                // issued together, the operation's fence checked once for all
                committing.addAll(FencedSwitches.commitAll(new ArrayList<>(staged)));
                Collections.fill(staged, null);
            }
            MetronException commitFailure = null;
            for (int i = 0; i < batches.size(); i++) {
                long t2 = System.nanoTime();
                DeviceId device = batches.get(i).getKey();
                List<FlowRule> rules = batches.get(i).getValue();
                CompletableFuture<Void> commit = atOnce ? committing.get(i) : staged.set(i, null).commit();
                try {
                    calls.await(commit, Fault.SWITCH_FAILURE, "installing " + rules.size() + " rules on " + device);
                } catch (MetronException e) {
                    if (!atOnce) {
                        throw e;
                    }
                    // the other devices' commits are under way: each that succeeds is undone with the rest
                    commitFailure = commitFailure == null ? e : commitFailure;
                    continue;
                }
                undo.push(new Undo(rules.size() + " rules on " + device, () -> switches.remove(device, rules)));
                timing.append(", ").append(device).append(' ').append(rules.size()).append(" rules live ")
                        .append(ms(t2, System.nanoTime())).append(" ms");
            }
            if (commitFailure != null) {
                throw commitFailure;
            }
            log.info("Chain {} deployed: {}", chain, timing);
            return new Result(installed(plan), running);
        } catch (MetronException e) {
            discard(staged);
            // also when another instance owns the chain now (NOT_LEADER, refused by the agent before any switch rule
            // was committed): what this one installed is its own (an agent refuses a NIC rule id it holds), and an
            // undo the agent refuses stops the rollback (rollback)
            List<String> failedUndo = server == null ? rollback(undo) : server.abandon();
            if (failedUndo.isEmpty()) {
                throw new MetronException(e.fault(), e.getMessage() + " (rolled back)", e);
            }
            throw new MetronException(e.fault(), e.getMessage() + " (rollback incomplete: " + failedUndo + ")", e);
        }
    }

    /**
     * What {@code plan} installs once deployed: the chain's record a bring-up writes before it commits anything
     * (a next owner then finds and removes what an owner that stopped half-way left), and {@link #deploy}'s result.
     */
    static InstalledState installed(DeploymentPlan plan) {
        return new InstalledState(plan.chainId(), plan.server().map(MetronServer::id), plan.allSwitchRules(),
                plan.nicRules().stream().map(r -> r.getId()).collect(Collectors.toList()), plan.server().isPresent());
    }

    CompletableFuture<SwitchProgrammer.Staged> stageOn(DeviceId device, List<FlowRule> rules) {
        return stageOn(device, rules, List.of());
    }

    CompletableFuture<SwitchProgrammer.Staged> stageOn(DeviceId device, List<FlowRule> rules,
                                                       Collection<FlowRule> removals) {
        try {
            return switches.stage(device, rules, removals);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Drops what was staged and never committed; the devices time such bundles out anyway. */
    void discard(List<SwitchProgrammer.Staged> staged) {
        for (SwitchProgrammer.Staged s : staged) {
            if (s != null) {
                try {
                    calls.await(AgentCalls.started(s::discard), "discarding staged rules");
                } catch (MetronException ex) {
                    log.warn("Could not discard staged rules: {}", AgentCalls.reason(ex));
                }
            }
        }
    }

    private static long ms(long from, long to) {
        return (to - from) / 1_000_000;
    }

    /**
     * The agent's part of one deployment, started at once: NIC rules then the pipeline, as chained agent calls
     * that run while the caller plans and stages switch rules.
     */
    public final class ServerStart {
        private final ChainId chain;
        private final AgentClient agent;
        private final List<NicRule> rules;
        private final CompletableFuture<?> nicRules;
        private final CompletableFuture<PipelineStatus> pipeline;

        private ServerStart(ChainId chain, AgentClient agent, List<NicRule> rules, DeployPipelineRequest request) {
            this.chain = chain;
            this.agent = agent;
            this.rules = List.copyOf(rules);
            this.nicRules = rules.isEmpty() ? CompletableFuture.completedFuture(null)
                    : AgentCalls.started(() -> agent.installNicRules(NicRuleBatch.newBuilder().addAllRules(rules)
                            .build()));
            this.pipeline = nicRules.thenCompose(v -> agent.deployPipeline(request));
        }

        /** Waits for the agent; records the undo of each step that succeeded; answers whether it is RUNNING. */
        boolean finish(Deque<Undo> undo) {
            if (!rules.isEmpty()) {
                calls.await(nicRules, Fault.AGENT_FAILURE, "installing " + rules.size() + " NIC rules on agent "
                        + agent.target());
                List<Long> ids = rules.stream().map(r -> r.getId()).collect(Collectors.toList());
                undo.push(new Undo("NIC rules " + ids + " on " + agent.target(), () -> agent.removeNicRules(ids)));
            }
            PipelineStatus status = calls.build(agent, pipeline, Fault.AGENT_FAILURE, "deploying pipeline " + chain
                    + " on agent " + agent.target());
            undo.push(new Undo("pipeline " + chain + " on " + agent.target(),
                    () -> agent.removePipeline(chain.name())));
            if (status.getState() == PipelineState.PIPELINE_FAILED) {
                throw new MetronException(Fault.AGENT_FAILURE, "agent " + agent.target() + " reports pipeline "
                        + chain + " FAILED: " + status.getMessage());
            }
            return status.getState() == PipelineState.PIPELINE_RUNNING;
        }

        /**
         * Waits for the agent's part, undoing nothing: a failover prepared on a spare server knows its pipeline runs
         * before the lost server's deadline passes. Hand it to {@link #deploy} afterwards (its steps are then done and
         * recorded for rollback there) or {@link #abandon} it.
         *
         * @return whether the pipeline is RUNNING (else still starting)
         * @throws MetronException when the agent refused or did not answer (call {@link #abandon} then)
         */
        public boolean ready() {
            return finish(new ArrayDeque<>());
        }

        /**
         * Undoes whatever of it succeeded (after waiting for it): for a deployment given up before its switch
         * rules were planned.
         *
         * @return what could not be undone
         */
        public List<String> abandon() {
            Deque<Undo> undo = new ArrayDeque<>();
            try {
                finish(undo);
            } catch (MetronException e) {
                log.debug("Abandoned agent start of {} had failed anyway: {}", chain, e.getMessage());
            }
            return rollback(undo);
        }
    }

    /**
     * Removes what a chain installed: offload device and switches first (no new traffic enters), then the
     * pipeline, then the NIC rules.
     *
     * @return what could not be removed (empty when everything went)
     */
    public List<String> undeploy(InstalledState state, Optional<MetronServer> server) {
        Deque<Undo> undo = new ArrayDeque<>();
        if (server.isPresent()) {
            AgentClient agent = server.get().agent();
            // a restarted agent no longer holds what it was given: NOT_FOUND means already removed
            if (!state.nicRuleIds().isEmpty()) {
                undo.push(new Undo("NIC rules on " + agent.target(),
                        () -> AgentCalls.removeNicRulesPresent(agent, state.nicRuleIds())));
            }
            if (state.pipeline()) {
                undo.push(new Undo("pipeline " + state.chainId() + " on " + agent.target(),
                        () -> AgentCalls.removePipelinePresent(agent, state.chainId().name())));
            }
        }
        // switch rules were recorded in install order (offload device last): undo pushes make it first
        Map<DeviceId, List<FlowRule>> byDevice = new java.util.LinkedHashMap<>();
        state.switchRules().forEach(r -> byDevice.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>())
                .add(r.rule()));
        byDevice.forEach((dev, rules) -> undo.push(new Undo(rules.size() + " rules on " + dev,
                () -> switches.remove(dev, rules))));
        return rollback(undo);
    }

    /**
     * Moves a deployed chain's switch rules to a new plan (new path or offload device; the server part stays):
     * installs the new plan's rules device by device with rollback, then removes the old rules the new plan
     * does not keep, best effort (their devices may be down).
     *
     * @param switchRules the new plan's rules per device, devices in install order (offload device last)
     * @return the chain's new installed state
     * @throws MetronException SWITCH_FAILURE when the new rules cannot be installed (old rules untouched)
     */
    public InstalledState reroute(InstalledState old, Map<DeviceId, List<InstalledRule>> switchRules) {
        Deque<Undo> undo = new ArrayDeque<>();
        // compared as table entries, not by id: a rule installed by an earlier version under another id scheme
        // is the same entry, and a strict delete of the "stale" old one would take the new one away
        Set<Object> kept = new HashSet<>();
        Set<Object> before = entries(old.switchRules());
        try {
            for (Map.Entry<DeviceId, List<InstalledRule>> e : switchRules.entrySet()) {
                List<FlowRule> rules = e.getValue().stream().map(InstalledRule::rule).collect(Collectors.toList());
                rules.forEach(r -> kept.add(entry(r)));
                List<FlowRule> added = rules.stream().filter(r -> !before.contains(entry(r)))
                        .collect(Collectors.toList());
                calls.await(switches.install(e.getKey(), rules), Fault.SWITCH_FAILURE,
                        "installing " + rules.size() + " rerouted rules on " + e.getKey());
                undo.push(new Undo(added.size() + " rules on " + e.getKey(), () -> switches.remove(e.getKey(), added)));
            }
        } catch (MetronException e) {
            List<String> failedUndo = rollback(undo);
            throw new MetronException(e.fault(), e.getMessage() + (failedUndo.isEmpty() ? " (rolled back)"
                    : " (rollback incomplete: " + failedUndo + ")"), e);
        }
        removeStale(old, kept); // failures are logged: a failed device's rules die with it
        ChainFence.check("recording the rerouted rules of " + old.chainId()); // refused removals: deposed meanwhile
        return new InstalledState(old.chainId(), old.server(),
                switchRules.values().stream().flatMap(List::stream).collect(Collectors.toList()), old.nicRuleIds(),
                old.pipeline());
    }

    /**
     * Removes {@code old}'s switch rules whose table entries ({@link #entry}) are not in {@code kept}, devices in
     * reverse install order (offload device first), best effort. Compared as entries, not by id: a rule of the new
     * placement that took an old rule's entry (same match and priority) would go with a strict delete of the old.
     *
     * @return what could not be removed
     */
    List<String> removeStale(InstalledState old, Set<Object> kept) {
        Map<DeviceId, List<FlowRule>> stale = new java.util.LinkedHashMap<>();
        old.switchRules().stream().map(InstalledRule::rule).filter(r -> !kept.contains(entry(r)))
                .forEach(r -> stale.computeIfAbsent(r.deviceId(), k -> new ArrayList<>()).add(r));
        Deque<Undo> removals = new ArrayDeque<>();
        stale.forEach((dev, rules) -> removals.push(new Undo(rules.size() + " old rules on " + dev,
                () -> switches.remove(dev, rules))));
        return rollback(removals);
    }

    /** The table entries of some installed switch rules. */
    static Set<Object> entries(java.util.Collection<InstalledRule> rules) {
        return rules.stream().map(r -> entry(r.rule())).collect(Collectors.toSet());
    }

    /** What identifies a rule's entry in a switch table (what a strict delete matches). */
    static Object entry(FlowRule r) {
        return List.of(r.deviceId(), r.tableId(), r.priority(), r.selector());
    }

    /** Removes some of a chain's switch rules from one device (a call that throws is a failed future). */
    CompletableFuture<Void> switchRemoval(DeviceId device, List<org.metron.app.store.InstalledRule> rules) {
        return AgentCalls.started(() -> switches.remove(device, rules.stream()
                .map(org.metron.app.store.InstalledRule::rule).collect(Collectors.toList())));
    }

    /** Runs every undo, last pushed first; answers what could not be undone. */
    List<String> rollback(Deque<Undo> undo) {
        List<String> failed = new ArrayList<>();
        while (!undo.isEmpty()) {
            Undo u = undo.pop();
            try {
                calls.await(AgentCalls.started(u.action::get), "undoing " + u.what);
            } catch (MetronException ex) {
                log.warn("Could not undo {}: {}", u.what, AgentCalls.reason(ex));
                failed.add(u.what + ": " + AgentCalls.reason(ex));
                if (AgentCalls.notOwner(ex)) {
                    // another instance owns the chain now: the rest may be its too
                    undo.forEach(rest -> failed.add(rest.what + ": left to the chain's new owner"));
                    undo.clear();
                }
            }
        }
        return failed;
    }

    /** How this deployer waits for its agent calls and device batches (the step timeout, build deadlines). */
    public AgentCalls calls() {
        return calls;
    }
}
