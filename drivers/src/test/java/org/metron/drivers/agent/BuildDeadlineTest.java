package org.metron.drivers.agent;

import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Tag;
import org.metron.agent.v1.TagType;
import org.metron.drivers.testing.AgentProcess;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * A call that builds a pipeline carries the endpoint's build deadline, every other call its deadline (a real
 * agent): a DeployPipeline runs to the end under a 1 ms call deadline, and fails under a 1 ms build deadline. A
 * DeployPipeline over gRPC takes milliseconds here even for this one-element group (BENCHMARKS.md: 11.9 ms), so
 * 1 ms is shorter than any of them.
 */
public class BuildDeadlineTest {
    private static final Duration ONE_MS = Duration.ofMillis(1);

    @Test
    public void aPipelineBuildHasItsOwnDeadline() throws Exception {
        try (AgentProcess agent = AgentProcess.start(new AgentProcess.Options())) {
            AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(agent.port())
                    .deadline(AgentProcess.CALL_DEADLINE).build();
            try (GrpcAgentClient normal = GrpcAgentClient.connect(ep)) {
                ServerResources res = normal.getResources().get(30, TimeUnit.SECONDS);
                try (GrpcAgentClient quickCalls = GrpcAgentClient.connect(ep.toBuilder().deadline(ONE_MS).build())) {
                    assertEquals(AgentEndpoint.DEFAULT_BUILD_DEADLINE, quickCalls.buildDeadline());
                    assertEquals(PipelineState.PIPELINE_RUNNING,
                                 quickCalls.deployPipeline(pipeline("built", 7, res)).get(60, TimeUnit.SECONDS)
                                         .getState());
                }
                try (GrpcAgentClient quickBuilds = GrpcAgentClient.connect(ep.toBuilder().buildDeadline(ONE_MS)
                        .build())) {
                    ExecutionException e = assertThrows(ExecutionException.class, () -> quickBuilds.deployPipeline(
                            pipeline("cut-short", 8, res)).get(60, TimeUnit.SECONDS));
                    assertTrue(String.valueOf(e.getCause()), e.getCause() instanceof AgentException);
                    assertEquals(e.getCause().getMessage(), AgentException.Code.DEADLINE_EXCEEDED,
                                 ((AgentException) e.getCause()).code());
                    // its calls that build nothing keep the ordinary deadline
                    assertTrue(quickBuilds.health().get(30, TimeUnit.SECONDS).getServing());
                }
                assertTrue(normal.listPipelines().get(30, TimeUnit.SECONDS).getPipelinesList().stream()
                                   .anyMatch(p -> p.getPipelineId().equals("built")));
            }
        }
    }

    /** A one-group pipeline that forwards what its tag brings in, on the agent's first core and NIC. */
    private static DeployPipelineRequest pipeline(String id, int tag, ServerResources res) {
        String nic = res.getNics(0).getName();
        return DeployPipelineRequest.newBuilder().setPipelineId(id).setIngressNic(nic)
                .addEgress(Egress.newBuilder().setNic(nic))
                .addGroups(GroupSpec.newBuilder().setGroupId("g0").setClickConfig("input -> [0]output;")
                                   .setTag(Tag.newBuilder().setType(TagType.TAG_MAC).setValue(tag))
                                   .setCore(res.getCores(0).getId()).addClassIds(0))
                .build();
    }
}
