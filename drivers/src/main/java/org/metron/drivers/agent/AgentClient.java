package org.metron.drivers.agent;

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

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One Metron agent's control API (agent.proto's MetronAgent service), asynchronous.
 * Every future completes exceptionally with an {@link AgentException} naming the agent and the gRPC error.
 */
public interface AgentClient extends AutoCloseable {

    /** "host:port" of the agent. */
    String target();

    /**
     * How long a call that builds or fills a pipeline ({@link #deployPipeline}, {@link #updatePipeline},
     * {@link #importState}) may take before it fails (other calls: the endpoint's deadline).
     */
    default Duration buildDeadline() {
        return AgentEndpoint.DEFAULT_BUILD_DEADLINE;
    }

    CompletableFuture<ServerResources> getResources();

    CompletableFuture<HealthReply> health();

    /**
     * Whether the connection to the agent is up right now, when the client knows (no call is made). A killed agent's
     * connection is reset by its kernel at once; a busy (or stopped) agent keeps it up while it answers late. Empty:
     * the client cannot tell.
     */
    default Optional<Boolean> connected() {
        return Optional.empty();
    }

    CompletableFuture<PipelineStatus> deployPipeline(DeployPipelineRequest request);

    CompletableFuture<PipelineStatus> updatePipeline(UpdatePipelineRequest request);

    /** Removes a pipeline, unfenced (owner token 0). */
    default CompletableFuture<Void> removePipeline(String pipelineId) {
        return removePipeline(RemovePipelineRequest.newBuilder().setPipelineId(pipelineId).build());
    }

    /** Removes a pipeline; the request may carry its owner's fencing token (agent.proto). */
    CompletableFuture<Void> removePipeline(RemovePipelineRequest request);

    CompletableFuture<ListPipelinesReply> listPipelines();

    /** All-or-nothing per batch; the batch may name its chain and carry its owner's fencing token (agent.proto). */
    CompletableFuture<NicRuleReply> installNicRules(NicRuleBatch batch);

    /** Removes NIC rules, all or nothing; the request may name their chain and carry its owner's fencing token. */
    CompletableFuture<NicRuleReply> removeNicRules(NicRuleIds request);

    /** Removes NIC rules, unfenced (tools, tests). */
    default CompletableFuture<NicRuleReply> removeNicRules(Collection<Long> ids) {
        return removeNicRules(NicRuleIds.newBuilder().addAllIds(ids).build());
    }

    /** Rules of one NIC; "" = all NICs. */
    CompletableFuture<NicRuleList> listNicRules(String nic);

    /** Statistics of one pipeline; "" = everything. */
    CompletableFuture<Stats> getStats(String pipelineId);

    /**
     * Subscribes to periodic load reports. The subscription survives agent restarts and connection loss
     * (it resubscribes with exponential backoff, reporting each loss to {@code onError}); closing the
     * returned handle cancels it.
     */
    default AutoCloseable streamLoad(int intervalMs, Consumer<Stats> onReport, Consumer<Throwable> onError) {
        return streamLoad(intervalMs, 0, onReport, onError);
    }

    /**
     * As {@link #streamLoad(int, Consumer, Consumer)}, and a report also comes as soon as a core's load since the
     * previous report reaches {@code alertLoad} (0 = never early; see LoadStreamRequest.alert_load).
     */
    AutoCloseable streamLoad(int intervalMs, double alertLoad, Consumer<Stats> onReport, Consumer<Throwable> onError);

    CompletableFuture<StateSnapshot> exportState(String pipelineId, String groupId);

    CompletableFuture<ImportStateReply> importState(ImportStateRequest request);

    /** Releases the connection; pending calls fail with CANCELLED/UNAVAILABLE. */
    @Override
    void close();
}
