package org.metron.app.scaling;

import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.PipelineStatus;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.impl.AgentCalls;
import org.metron.app.impl.ChainFence;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.drivers.agent.AgentClient;
import org.metron.synth.CompiledChain;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.metron.app.scaling.OperationPlans.agentSteps;
import static org.metron.app.scaling.OperationPlans.firstUpdate;
import static org.metron.app.scaling.OperationPlans.newNicRule;
import static org.metron.app.scaling.OperationPlans.pipeline;
import static org.metron.app.scaling.OperationPlans.union;

/**
 * The steps of a split or merge on the chain's own server (docs/scaling.md#steps): the agent's new group set (state
 * cloned for a split, both states in the kept group for a merge) with the new group's NIC rule, then, after the
 * re-tag, the window state; a merge releases the retired group's NIC rule.
 */
final class LocalSteps implements OperationRunner.Steps {
    private final OperationRunner runner;
    private final AgentClient agent;
    private final CompiledChain cc;

    LocalSteps(OperationRunner runner, AgentClient agent, CompiledChain cc) {
        this.runner = runner;
        this.agent = agent;
        this.cc = cc;
    }

    @Override
    public boolean prepare(ScalingOperation op, StepTimer timer) {
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
        CompletableFuture<Void> transit = CompletableFuture.runAsync(ChainFence.carried(() -> {
            runner.store.installed().put(prepared.chain(), union(prepared));
            runner.installByDevice(prepared.transitAdded());
        }));
        MetronException failed = null;
        try {
            runner.calls.await(transit, Fault.SWITCH_FAILURE, "recording the rules of " + op.chain()
                    + " and installing its transit rules");
        } catch (MetronException e) {
            failed = e;
        }
        PipelineStatus updated = null;
        try {
            updated = runner.calls.build(agent, pipe, "updating pipeline " + op.chain() + " on " + agent.target());
        } catch (MetronException e) {
            failed = failed == null ? e : failed;
        }
        try {
            runner.calls.await(nic, "installing the NIC rule of " + op.other() + " on " + agent.target());
        } catch (MetronException e) {
            failed = failed == null ? e : failed;
        }
        if (failed != null) {
            throw failed;
        }
        timer.lap("nic+pipeline");
        timer.note("agent " + agentMs.getNow(-1L) + agentSteps(updated));
        return true;
    }

    @Override
    public void sync(ScalingOperation op, StepTimer timer) {
        if (op.kind() == Kind.MERGE) {
            runner.drain(agent, op);
            timer.lap("drain");
        }
        // state created between the clone and the re-tag: the table that saw a flow first wins
        runner.calls.build(agent, agent.updatePipeline(pipeline(op, cc, op.after(), op.kind() == Kind.SPLIT
                        ? Map.of(op.other(), List.of(op.group(), op.other()))
                        : Map.of(op.group(), List.of(op.other(), op.group())))),
                "merging window state on " + agent.target());
        timer.lap("sync");
    }

    @Override
    public void release(ScalingOperation op, List<String> problems) {
        if (op.nicRuleId() != 0) {
            try {
                runner.calls.await(agent.removeNicRules(List.of(op.nicRuleId())), "removing the NIC rule of "
                        + op.other());
            } catch (MetronException e) {
                problems.add(e.getMessage());
            }
        }
    }

    /** Puts everything back as before the operation; answers what could not be undone. */
    @Override
    public List<String> rollback(ScalingOperation op) {
        List<String> left = new ArrayList<>();
        if (op.step().compareTo(Step.PIPELINE) >= 0) {
            // The offload rules need no restoring: rollback only happens before the re-tag batch was confirmed,
            // and that batch is atomic (SwitchProgrammer#install), so they are still the original ones.
            left.addAll(runner.removeByDevice(op.transitAdded()));
            try {
                boolean otherRuns = runner.calls.await(agent.listPipelines(), "listing pipelines").getPipelinesList()
                        .stream()
                        .filter(s -> s.getPipelineId().equals(op.chain().name()))
                        .flatMap(s -> s.getGroupsList().stream()).anyMatch(g -> g.getGroupId().equals(op.other()));
                PipelineStatus ignored = null;
                if (op.kind() == Kind.SPLIT && otherRuns) {
                    // flows the new group created go back with it; the group's own table wins conflicts
                    ignored = runner.calls.build(agent, agent.updatePipeline(pipeline(op, cc, op.before(),
                            Map.of(op.group(), List.of(op.group(), op.other())))), "restoring pipeline " + op.chain());
                } else if (op.kind() == Kind.MERGE) {
                    ignored = runner.calls.build(agent, agent.updatePipeline(pipeline(op, cc, op.before(),
                            Map.of(op.group(), List.of(op.group()), op.other(), List.of(op.other(), op.group())))),
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
                    runner.calls.await(AgentCalls.removeNicRulesPresent(agent, List.of(op.nicRuleId())),
                            "removing the NIC rule of " + op.other());
                } catch (MetronException e) {
                    left.add(e.getMessage());
                }
            }
            runner.releaseSplit(op);
        }
        runner.restoreInstalled(op);
        return left;
    }
}
