package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.ImportStateReply;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.ListPipelinesReply;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.NicRuleIds;
import org.metron.agent.v1.NicRuleList;
import org.metron.agent.v1.NicRuleReply;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.RemovePipelineRequest;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.spi.Leadership;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * A server's agent as the controller core uses it: every request that changes a chain's pipeline (deploy, update,
 * remove, state import; the pipeline is named after its chain) carries this instance's ownership term of the chain
 * as its fencing token (agent.proto, owner_token; {@link Leadership#term}), read when the request is sent. An
 * instance that lost the chain without knowing it (a GC pause, a partition) sends its old term, which the agent
 * refuses (ABORTED) once the new owner has been there; one that knows it lost the chain sends nothing and fails
 * the same way at once. Either way {@link AgentCalls} makes the failure NOT_LEADER and the operation stops
 * without undoing anything (what it would undo may be the new owner's). Before any of that, a pipeline change or
 * NIC rule write of a chain operation is checked against the term the operation started with ({@link ChainFence}).
 * Reads pass through.
 */
final class FencedAgent implements AgentClient {
    private final AgentClient agent;
    private final Leadership leadership;

    FencedAgent(AgentClient agent, Leadership leadership) {
        this.agent = Objects.requireNonNull(agent);
        this.leadership = Objects.requireNonNull(leadership);
    }

    /** {@code send} with the pipeline's owner token, or the refusal when this instance does not own its chain. */
    private <T> CompletableFuture<T> fenced(String rpc, String pipeline, LongFunction<CompletableFuture<T>> send) {
        Optional<MetronException> refused = ChainFence.refusal(ChainFence.current(),
                rpc + " of pipeline " + pipeline + " to agent " + agent.target());
        if (refused.isPresent()) {
            return CompletableFuture.failedFuture(refused.get());
        }
        OptionalLong term;
        try {
            term = leadership.term(ChainId.of(pipeline));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (term.isEmpty()) {
            return CompletableFuture.failedFuture(new AgentException(agent.target(), rpc, AgentException.Code.ABORTED,
                    "not sent: this controller instance does not own chain " + pipeline + " (its owner: "
                            + leadership.owner(ChainId.of(pipeline)).orElse("none") + ")", null));
        }
        return send.apply(term.getAsLong());
    }

    @Override
    public CompletableFuture<PipelineStatus> deployPipeline(DeployPipelineRequest request) {
        return fenced("DeployPipeline", request.getPipelineId(),
                t -> agent.deployPipeline(request.toBuilder().setOwnerToken(t).build()));
    }

    @Override
    public CompletableFuture<PipelineStatus> updatePipeline(UpdatePipelineRequest request) {
        return fenced("UpdatePipeline", request.getPipelineId(),
                t -> agent.updatePipeline(request.toBuilder().setOwnerToken(t).build()));
    }

    @Override
    public CompletableFuture<Void> removePipeline(RemovePipelineRequest request) {
        return fenced("RemovePipeline", request.getPipelineId(),
                t -> agent.removePipeline(request.toBuilder().setOwnerToken(t).build()));
    }

    @Override
    public CompletableFuture<ImportStateReply> importState(ImportStateRequest request) {
        return fenced("ImportState", request.getSnapshot().getPipelineId(),
                t -> agent.importState(request.toBuilder().setOwnerToken(t).build()));
    }

    /**
     * NIC rules are checked against the term of the operation that writes them ({@link ChainFence}), and carry its
     * chain and that term (agent.proto NicRuleBatch.owner_token: the agent refuses an older term than the chain's
     * newest, as for its pipeline). Written outside a chain operation (tools), they go unfenced.
     */
    @Override
    public CompletableFuture<NicRuleReply> installNicRules(NicRuleBatch batch) {
        return nicRuleWrite("installing " + batch.getRulesCount() + " NIC rules on " + agent.target(),
                (chain, term) -> agent.installNicRules(chain == null ? batch
                        : batch.toBuilder().setPipelineId(chain).setOwnerToken(term).build()));
    }

    @Override
    public CompletableFuture<NicRuleReply> removeNicRules(NicRuleIds request) {
        return nicRuleWrite("removing NIC rules " + request.getIdsList() + " from " + agent.target(),
                (chain, term) -> agent.removeNicRules(chain == null ? request
                        : request.toBuilder().setPipelineId(chain).setOwnerToken(term).build()));
    }

    /** Sends a NIC rule write: the refusal when the running operation lost its term, else {@code send} with the
     * operation's chain and term (null and 0 outside an operation: unfenced). */
    private CompletableFuture<NicRuleReply> nicRuleWrite(String what,
            java.util.function.BiFunction<String, Long, CompletableFuture<NicRuleReply>> send) {
        Optional<ChainFence.Op> op = ChainFence.current();
        return ChainFence.refusal(op, what).<CompletableFuture<NicRuleReply>>map(CompletableFuture::failedFuture)
                .orElseGet(() -> send.apply(op.map(o -> o.chain().name()).orElse(null),
                        op.map(o -> o.term().orElse(0)).orElse(0L)));
    }

    // ---- passed through ------------------------------------------------------------------------------------

    @Override
    public String target() {
        return agent.target();
    }

    @Override
    public Duration buildDeadline() {
        return agent.buildDeadline();
    }

    @Override
    public CompletableFuture<ServerResources> getResources() {
        return agent.getResources();
    }

    @Override
    public CompletableFuture<HealthReply> health() {
        return agent.health();
    }

    @Override
    public Optional<Boolean> connected() {
        return agent.connected();
    }

    @Override
    public CompletableFuture<ListPipelinesReply> listPipelines() {
        return agent.listPipelines();
    }

    @Override
    public CompletableFuture<NicRuleList> listNicRules(String nic) {
        return agent.listNicRules(nic);
    }

    @Override
    public CompletableFuture<Stats> getStats(String pipelineId) {
        return agent.getStats(pipelineId);
    }

    @Override
    public AutoCloseable streamLoad(int intervalMs, double alertLoad, Consumer<Stats> onReport,
                                    Consumer<Throwable> onError) {
        return agent.streamLoad(intervalMs, alertLoad, onReport, onError);
    }

    @Override
    public CompletableFuture<StateSnapshot> exportState(String pipelineId, String groupId) {
        return agent.exportState(pipelineId, groupId);
    }

    /** The registry owns the client: the core never closes it (spi/MetronServer). */
    @Override
    public void close() {
    }

    /** The agent's, so logs and views read as before. */
    @Override
    public String toString() {
        return agent.toString();
    }
}
