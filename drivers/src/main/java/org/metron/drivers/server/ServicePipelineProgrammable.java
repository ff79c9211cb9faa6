package org.metron.drivers.server;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.onosproject.net.driver.HandlerBehaviour;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Deploys, updates and removes the stateful part of service chains on a server. Asynchronous, so the
 * controller can program several servers of one chain at once and roll all of them back on any failure.
 * Futures fail with {@link org.metron.drivers.agent.AgentException}.
 */
public interface ServicePipelineProgrammable extends HandlerBehaviour {

    CompletableFuture<PipelineStatus> deploy(DeployPipelineRequest request);

    /** Replaces the pipeline's group set (splits and merges keep flow state via {@code state_from}). */
    CompletableFuture<PipelineStatus> update(UpdatePipelineRequest request);

    CompletableFuture<Void> remove(String pipelineId);

    CompletableFuture<List<PipelineStatus>> pipelines();
}
