package org.metron.drivers.server;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.ListPipelinesReply;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.UpdatePipelineRequest;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** {@link ServicePipelineProgrammable} over the agent's pipeline RPCs; the agent validates configurations. */
public class MetronServerPipelines extends AbstractMetronBehaviour implements ServicePipelineProgrammable {

    @Override
    public CompletableFuture<PipelineStatus> deploy(DeployPipelineRequest request) {
        return agent().deployPipeline(request);
    }

    @Override
    public CompletableFuture<PipelineStatus> update(UpdatePipelineRequest request) {
        return agent().updatePipeline(request);
    }

    @Override
    public CompletableFuture<Void> remove(String pipelineId) {
        return agent().removePipeline(pipelineId);
    }

    @Override
    public CompletableFuture<List<PipelineStatus>> pipelines() {
        return agent().listPipelines().thenApply(ListPipelinesReply::getPipelinesList);
    }
}
