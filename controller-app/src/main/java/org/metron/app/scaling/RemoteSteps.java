package org.metron.app.scaling;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.ChainId;
import org.metron.app.api.ClassSlice;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.impl.AgentCalls;
import org.metron.app.impl.AgentRequests;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.drivers.agent.AgentClient;
import org.metron.synth.CompiledChain;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.metron.app.scaling.OperationPlans.pipeline;
import static org.metron.app.scaling.OperationPlans.remoteGroup;
import static org.metron.app.scaling.OperationPlans.stateSlice;
import static org.metron.app.scaling.OperationPlans.union;

/**
 * The steps of a scale-out or its merge back, in the order of docs/scaling.md#scale-out: PIPELINE (the other
 * server's pipeline and its state over gRPC, transit and return rules), then after the re-tag the window flows
 * (SYNCED); a merge back releases the retired group's NIC rule and pipeline on the other server.
 */
final class RemoteSteps implements OperationRunner.Steps {
    private final OperationRunner runner;
    private final AgentClient local;
    /** The other server's agent; null when it is lost: nothing is asked of it. */
    private final AgentClient far;
    private final CompiledChain cc;
    /** The group on the other server. */
    private final GroupAssignment rg;
    private final boolean split;

    RemoteSteps(OperationRunner runner, AgentClient local, AgentClient far, ScalingOperation op) {
        this.runner = runner;
        this.local = local;
        this.far = far;
        this.cc = runner.compiled.compiled(op.chain());
        this.rg = remoteGroup(op).orElseThrow();
        this.split = op.kind() == Kind.SPLIT;
    }

    @Override
    public boolean prepare(ScalingOperation op, StepTimer timer) {
        runner.store.installed().put(op.chain(), union(op));
        if (split) {
            Tag marker = op.before().groups().get(0).tag();
            long asked = System.nanoTime();
            DeployPipelineRequest there = AgentRequests.remotePipeline(op.chain(), op.after(),
                    rg.server().orElseThrow(), cc, marker);
            // beside the chain's other groups there (kept running with their flows), or a new pipeline
            runner.calls.build(far, there.getGroupsCount() > 1 ? far.updatePipeline(AgentRequests.asUpdate(there))
                    : far.deployPipeline(there), "deploying " + op.other() + " of " + op.chain() + " on "
                    + far.target());
            if (op.nicRuleId() != 0) {
                runner.calls.await(far.installNicRules(NicRuleBatch.newBuilder().addRules(AgentRequests.remoteNicRule(
                        op.chain(), rg)).build()), "installing the NIC rule of " + op.other() + " on "
                        + far.target());
            }
            long n = moveState(local, op.group(), far, op.other(), op.chain(), stateSlice(rg), false);
            timer.lap("nic+pipeline");
            timer.note("remote agent " + (System.nanoTime() - asked) / 1_000_000 + ", " + n + " flows copied");
            runner.installByDevice(op.transitAdded());
            timer.lap("transit");
        } else {
            // the kept group takes the merged classes (adopting its own table), then the remote flows
            keepOwnTables(op);
            long n = far == null ? 0
                    : moveState(far, op.other(), local, op.group(), op.chain(), ClassSlice.WHOLE, true);
            timer.lap("pipeline+state");
            timer.note(far == null ? "the other server is lost: no flows to add" : n + " flows added");
        }
        // the switch step installs the transit rules again (idempotent)
        return false;
    }

    @Override
    public void sync(ScalingOperation op, StepTimer timer) {
        if (split) {
            // the kept group drops the moved classes (adopting its table); flows it mapped for them
            // between the export and the re-tag reach the remote group (which keeps its own on a clash)
            keepOwnTables(op);
            moveState(local, op.group(), far, op.other(), op.chain(), stateSlice(rg), true);
        } else if (far != null) {
            runner.drain(far, op);
            timer.lap("drain");
            moveState(far, op.other(), local, op.group(), op.chain(), ClassSlice.WHOLE, true);
            timer.lap("sync");
        }
    }

    @Override
    public void release(ScalingOperation op, List<String> problems) {
        if (far != null) {
            problems.addAll(removeRemote(op, op.after()));
        }
    }

    /** A scale-out: its remote part ({@link #rollbackRemote}); a merge back: the chain's server's pipeline. */
    @Override
    public List<String> rollback(ScalingOperation op) {
        return split ? rollbackRemote(op) : new LocalSteps(runner, local, cc).rollback(op);
    }

    /**
     * Removes a scaled-out group's NIC rule and pipeline from its server, as far as they are there; the pipeline is
     * updated instead when {@code remaining} keeps other groups of the chain there (they run on with their flows).
     */
    private List<String> removeRemote(ScalingOperation op, Placement remaining) {
        List<String> left = new ArrayList<>();
        long id = op.nicRuleId();
        try {
            if (id != 0) {
                runner.calls.await(AgentCalls.removeNicRulesPresent(far, List.of(id)), "removing the NIC rule of "
                        + op.other() + " from " + far.target());
            }
        } catch (MetronException e) {
            left.add(e.getMessage());
        }
        try {
            DeviceId server = rg.server().orElseThrow();
            if (remaining.groups().stream().noneMatch(g -> g.server().equals(Optional.of(server)))) {
                runner.calls.await(AgentCalls.removePipelinePresent(far, op.chain().name()), "removing " + op.other()
                        + " from " + far.target());
            } else if (runner.calls.await(far.listPipelines(), "listing pipelines of " + far.target())
                    .getPipelinesList().stream().anyMatch(s -> s.getPipelineId().equals(op.chain().name()))) {
                // other groups of the chain run on there with their flows
                runner.calls.build(far, far.updatePipeline(AgentRequests.asUpdate(AgentRequests.remotePipeline(
                        op.chain(), remaining, server, cc, op.before().groups().get(0).tag()))), "retiring "
                        + op.other() + " on " + far.target());
            }
        } catch (MetronException e) {
            left.add(e.getMessage());
        }
        return left;
    }

    /** Undoes a scale-out stopped before its re-tag: the other server's pipeline and rules, the tag, the store. */
    private List<String> rollbackRemote(ScalingOperation op) {
        List<String> left = new ArrayList<>(runner.removeByDevice(op.transitAdded()));
        left.addAll(removeRemote(op, op.before()));
        runner.releaseSplit(op);
        runner.restoreInstalled(op);
        return left;
    }

    /**
     * The chain's pipeline on its own server after a scale-out or its merge back ({@code op.after()}), the kept
     * group adopting its own tables: the other server's flows are copied separately.
     */
    private void keepOwnTables(ScalingOperation op) {
        runner.calls.build(local, local.updatePipeline(pipeline(op, cc, op.after(), Map.of(op.group(),
                        List.of(op.group())))),
                "updating pipeline " + op.chain() + " on " + local.target());
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
        StateSnapshot snap = runner.calls.await(from.exportState(chain.name(), fromGroup), "exporting the state of "
                + fromGroup + " from " + from.target());
        StateSnapshot.Builder kept = snap.toBuilder().clearTables();
        for (StateTable t : snap.getTablesList()) {
            kept.addTables(t.toBuilder().clearEntries().addAllEntries(t.getEntriesList().stream()
                    .filter(e -> slice.contains(e.getKey().getSrcPort())).collect(Collectors.toList())));
        }
        return runner.calls.build(to, to.importState(ImportStateRequest.newBuilder().setSnapshot(kept)
                .setTargetGroupId(toGroup).setMerge(merge).build()), "importing the state of " + fromGroup + " into "
                + toGroup + " on " + to.target()).getEntries();
    }
}
