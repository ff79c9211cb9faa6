package org.metron.app.impl;

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
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
    private final Duration timeout;

    /**
     * @param timeout how long one step (one agent call, one device batch) may take
     */
    public Deployer(SwitchProgrammer switches, Duration timeout) {
        this.switches = Objects.requireNonNull(switches);
        this.timeout = Objects.requireNonNull(timeout);
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
    private static final class Undo {
        final String what;
        final Supplier<CompletableFuture<?>> action;

        Undo(String what, Supplier<CompletableFuture<?>> action) {
            this.what = what;
            this.action = action;
        }
    }

    /**
     * Deploys everything or nothing.
     *
     * @throws MetronException AGENT_FAILURE or SWITCH_FAILURE naming the step; everything was rolled back
     */
    public Result deploy(DeploymentPlan plan) {
        Deque<Undo> undo = new ArrayDeque<>();
        ChainId chain = plan.chainId();
        try {
            boolean running = true;
            long t0 = System.nanoTime();
            if (plan.server().isPresent()) {
                running = deployOnServer(plan, plan.server().get().agent(), undo);
            }
            StringBuilder timing = new StringBuilder("agent ").append((System.nanoTime() - t0) / 1_000_000)
                    .append(" ms");
            for (Map.Entry<DeviceId, List<InstalledRule>> e : plan.switchRules().entrySet()) {
                long t1 = System.nanoTime();
                List<FlowRule> rules = e.getValue().stream().map(InstalledRule::rule).collect(Collectors.toList());
                step(switches.install(e.getKey(), rules), Fault.SWITCH_FAILURE,
                        "installing " + rules.size() + " rules on " + e.getKey());
                undo.push(new Undo(rules.size() + " rules on " + e.getKey(),
                        () -> switches.remove(e.getKey(), rules)));
                timing.append(", ").append(e.getKey()).append(' ').append(rules.size()).append(" rules ")
                        .append((System.nanoTime() - t1) / 1_000_000).append(" ms");
            }
            log.info("Chain {} deployed: {}", chain, timing);
            return new Result(new InstalledState(chain, plan.server().map(MetronServer::id), plan.allSwitchRules(),
                    plan.nicRules().stream().map(r -> r.getId()).collect(Collectors.toList()),
                    plan.server().isPresent()), running);
        } catch (MetronException e) {
            List<String> failedUndo = rollback(undo);
            if (failedUndo.isEmpty()) {
                throw new MetronException(e.fault(), e.getMessage() + " (rolled back)", e);
            }
            throw new MetronException(e.fault(), e.getMessage() + " (rollback incomplete: " + failedUndo + ")", e);
        }
    }

    /** NIC rules then the pipeline; answers whether the agent reports it RUNNING. */
    private boolean deployOnServer(DeploymentPlan plan, AgentClient agent, Deque<Undo> undo) {
        ChainId chain = plan.chainId();
        if (!plan.nicRules().isEmpty()) {
            step(agent.installNicRules(NicRuleBatch.newBuilder().addAllRules(plan.nicRules()).build()),
                    Fault.AGENT_FAILURE, "installing " + plan.nicRules().size() + " NIC rules on agent "
                            + agent.target());
            List<Long> ids = plan.nicRules().stream().map(r -> r.getId()).collect(Collectors.toList());
            undo.push(new Undo("NIC rules " + ids + " on " + agent.target(), () -> agent.removeNicRules(ids)));
        }
        PipelineStatus status = step(agent.deployPipeline(plan.pipeline()), Fault.AGENT_FAILURE,
                "deploying pipeline " + chain + " on agent " + agent.target());
        undo.push(new Undo("pipeline " + chain + " on " + agent.target(), () -> agent.removePipeline(chain.name())));
        if (status.getState() == PipelineState.PIPELINE_FAILED) {
            throw new MetronException(Fault.AGENT_FAILURE, "agent " + agent.target() + " reports pipeline "
                    + chain + " FAILED: " + status.getMessage());
        }
        return status.getState() == PipelineState.PIPELINE_RUNNING;
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
                        () -> AgentCalls.goneIsDone(agent.removePipeline(state.chainId().name()))));
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
     * @return the chain's new installed state
     * @throws MetronException SWITCH_FAILURE when the new rules cannot be installed (old rules untouched)
     */
    public InstalledState reroute(InstalledState old, DeploymentPlan plan) {
        Deque<Undo> undo = new ArrayDeque<>();
        Set<FlowId> kept = new HashSet<>();
        Set<FlowId> before = old.switchRules().stream().map(r -> r.rule().id()).collect(Collectors.toSet());
        try {
            for (Map.Entry<DeviceId, List<InstalledRule>> e : plan.switchRules().entrySet()) {
                List<FlowRule> rules = e.getValue().stream().map(InstalledRule::rule).collect(Collectors.toList());
                rules.forEach(r -> kept.add(r.id()));
                List<FlowRule> added = rules.stream().filter(r -> !before.contains(r.id()))
                        .collect(Collectors.toList());
                step(switches.install(e.getKey(), rules), Fault.SWITCH_FAILURE,
                        "installing " + rules.size() + " rerouted rules on " + e.getKey());
                undo.push(new Undo(added.size() + " rules on " + e.getKey(), () -> switches.remove(e.getKey(), added)));
            }
        } catch (MetronException e) {
            List<String> failedUndo = rollback(undo);
            throw new MetronException(e.fault(), e.getMessage() + (failedUndo.isEmpty() ? " (rolled back)"
                    : " (rollback incomplete: " + failedUndo + ")"), e);
        }
        Map<DeviceId, List<FlowRule>> stale = new java.util.LinkedHashMap<>();
        old.switchRules().stream().map(InstalledRule::rule).filter(r -> !kept.contains(r.id()))
                .forEach(r -> stale.computeIfAbsent(r.deviceId(), k -> new ArrayList<>()).add(r));
        Deque<Undo> removals = new ArrayDeque<>();
        stale.forEach((dev, rules) -> removals.push(new Undo(rules.size() + " stale rules on " + dev,
                () -> switches.remove(dev, rules))));
        rollback(removals); // failures are logged: a failed device's rules die with it
        return new InstalledState(old.chainId(), old.server(), plan.allSwitchRules(), old.nicRuleIds(),
                old.pipeline());
    }

    private List<String> rollback(Deque<Undo> undo) {
        List<String> failed = new ArrayList<>();
        while (!undo.isEmpty()) {
            Undo u = undo.pop();
            try {
                u.action.get().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception ex) {
                log.warn("Could not undo {}: {}", u.what, Errors.message(ex));
                failed.add(u.what + ": " + Errors.message(ex));
            }
        }
        return failed;
    }

    private <T> T step(CompletableFuture<T> f, Fault fault, String what) {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetronException(fault, what + ": interrupted", e);
        } catch (Exception e) {
            throw new MetronException(fault, what + " failed: " + Errors.message(e), e);
        }
    }
}
