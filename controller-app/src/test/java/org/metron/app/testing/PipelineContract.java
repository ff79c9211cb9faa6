package org.metron.app.testing;

import org.junit.Test;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.PortBits;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StepTime;
import org.metron.agent.v1.Tag;
import org.metron.agent.v1.TagType;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.metron.app.testing.ContractCalls.assertFails;
import static org.metron.app.testing.ContractCalls.failure;
import static org.metron.app.testing.ContractCalls.importOf;
import static org.metron.app.testing.ContractCalls.ok;
import static org.metron.app.testing.NaptFlows.flow;

/**
 * {@link AgentContract}'s cases for the pipeline calls: DeployPipeline, UpdatePipeline and RemovePipeline, each
 * with its refusals, and the owner-token fencing all three apply.
 */
public abstract class PipelineContract extends BlackBoxContract {
    // ---- deploy ---------------------------------------------------------------------------------------------

    @Test
    public void deployRunsEveryGroupOnItsCoreUnderItsTag() throws Exception {
        int c0 = workers.get(0);
        int c1 = workers.get(1);
        PipelineStatus s = deploy("p", group("g0", 7, c0, NAPT), group("g1", 8, c1, PASS));
        assertEquals("p", s.getPipelineId());
        assertEquals(PipelineState.PIPELINE_RUNNING, s.getState());
        assertEquals(1, s.getGeneration());
        assertEquals(List.of("g0 7 " + c0 + " [7]", "g1 8 " + c1 + " [8]"), s.getGroupsList().stream()
                .map(g -> g.getGroupId() + " " + g.getTag().getValue() + " " + g.getCore() + " " + g.getClassIdsList())
                .collect(Collectors.toList()));
        assertEquals(Set.of("p/g0 tag 7 core " + c0, "p/g1 tag 8 core " + c1), running());
        ServerResources res = ok(agent().getResources());
        assertEquals(Set.of(7, 8), Set.copyOf(res.getTagsInUseList()));
        for (Core c : res.getCoresList()) {
            assertEquals(c.toString(), workers.subList(0, 2).contains(c.getId()) ? "p" : "", c.getPipelineId());
        }
    }

    @Test
    public void pipelinesMayShareACore() throws Exception {
        int c0 = workers.get(0);
        deploy("p", group("g0", 7, c0, PASS));
        deploy("q", group("g0", 8, c0, PASS));
        assertEquals(Set.of("p/g0 tag 7 core " + c0, "q/g0 tag 8 core " + c0), running());
    }

    @Test
    public void statusesEchoVlanTagsAndPortShares() throws Exception {
        GroupSpec vlan = group("g0", 7, workers.get(0), NAPT).toBuilder()
                .setTag(Tag.newBuilder().setType(TagType.TAG_VLAN).setValue(100)).setPortShare(share(1, 4)).build();
        GroupStatus g = deploy("p", vlan).getGroups(0);
        assertEquals(vlan.getTag(), g.getTag());
        assertEquals(vlan.getPortShare(), g.getPortShare());
        assertEquals(g, ok(agent().listPipelines()).getPipelines(0).getGroups(0));
    }

    @Test
    public void deployingARunningIdIsAlreadyExistsAndKeepsTheRunningOne() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), PASS));
        assertFails(Code.ALREADY_EXISTS, agent().deployPipeline(pipeline("p", group("g0", 9, workers.get(1), PASS))));
        assertEquals(Set.of("p/g0 tag 7 core " + workers.get(0)), running());
    }

    @Test
    public void aTagAnotherPipelineHasOnTheNicIsAlreadyExists() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), PASS));
        assertFails(Code.ALREADY_EXISTS, agent().deployPipeline(pipeline("q", group("g0", 7, workers.get(1), PASS))));
        assertEquals(Set.of("p/g0 tag 7 core " + workers.get(0)), running());
    }

    /** Refusals of a deploy that is wrong in itself: INVALID_ARGUMENT, nothing deployed. */
    @Test
    public void aBadDeployIsInvalidArgumentAndDeploysNothing() throws Exception {
        int c = workers.get(0);
        int notWorker = workers.stream().mapToInt(Integer::intValue).max().getAsInt() + 1;
        List<DeployPipelineRequest> bad = List.of(
                pipeline("p", group("g0", 7, c, "input -> -> [0]output;")),           // Click syntax
                pipeline("p", group("g0", 7, c, "input -> NoSuchElement -> [0]output;")), // unknown class
                pipeline("p", group("g0", 7, c, " ")),                                  // empty config
                pipeline("p", group("g0", 7, notWorker, PASS)),                         // not a worker core
                pipeline("p", group("g0", 0, c, PASS)),                                 // tag 0
                pipeline("p", group("g0", 7, c, PASS), group("g0", 8, c, PASS)),        // group id twice
                pipeline("p", group("g0", 7, c, PASS), group("g1", 7, c, PASS)),        // tag twice
                pipeline("p", group("g0", 7, c, PASS), group("g1", 8, c, PASS).toBuilder().addClassIds(7)
                        .build()),                                                      // class in two groups
                pipeline("p", group("g0", 7, c, PASS).toBuilder().setTag(Tag.newBuilder()
                        .setType(TagType.TAG_VLAN).setValue(4095)).build()),                // VLAN id 4095
                pipeline("p", group("g0", 7, c, PASS).toBuilder().setPortShare(share(4, 4)).build()),
                pipeline("p", group("g0", 7, c, PASS).toBuilder().setPortShare(share(1, 4)).build(),
                        group("g1", 8, c, PASS).toBuilder().setPortShare(share(1, 4)).build()), // one share twice
                pipeline("p"),                                                          // no group
                pipeline("", group("g0", 7, c, PASS)),                                  // no id
                pipeline("p", group("g0", 7, c, PASS)).toBuilder().setIngressNic("nonic0").build(),
                pipeline("p", group("g0", 7, c, PASS)).toBuilder().setEgress(0, Egress.newBuilder()
                        .setNic("nonic0")).build());
        for (DeployPipelineRequest r : bad) {
            AgentException e = failure(agent().deployPipeline(r));
            assertEquals(r + e.getMessage(), Code.INVALID_ARGUMENT, e.code());
            assertEquals(Set.of(), running());
        }
    }

    /** A declared flow-table capacity reserves memory: one that cannot fit is RESOURCE_EXHAUSTED. */
    @Test
    public void aDeclaredCapacityTheFlowMemoryCannotHoldIsResourceExhausted() throws Exception {
        ServerResources res = ok(agent().getResources());
        long tooMany = 4 * res.getFlowMemoryFreeBytes() / Math.max(1, res.getFlowEntryBytes()) + 1000;
        assertTrue("the agent's flow memory fits in 2^26 flows: " + res, tooMany <= 1 << 26);
        int c = workers.get(0);
        assertFails(Code.RESOURCE_EXHAUSTED, agent().deployPipeline(pipeline("p", group("g0", 7, c, napt(tooMany)))));
        assertEquals(Set.of(), running());
        for (long bad : List.of(0L, (1L << 26) + 1)) {
            assertFails(Code.INVALID_ARGUMENT, agent().deployPipeline(pipeline("p", group("g0", 7, c, napt(bad)))));
        }
        deploy("p", group("g0", 7, c, napt(1000)));
        assertEquals(Set.of("p/g0 tag 7 core " + c), running());
        assertFails(Code.RESOURCE_EXHAUSTED, agent().updatePipeline(update("p", group("g1", 8, c, napt(tooMany)))));
        assertEquals(Set.of("p/g0 tag 7 core " + c), running());
        long left = ok(agent().getResources()).getFlowMemoryFreeBytes();
        assertTrue("reserved: " + left + " of " + res.getFlowMemoryFreeBytes() + " left",
                left < res.getFlowMemoryFreeBytes());
    }

    // ---- update ---------------------------------------------------------------------------------------------

    @Test
    public void updateReplacesTheGroupSetAndCountsGenerations() throws Exception {
        int c0 = workers.get(0);
        int c1 = workers.get(1);
        deploy("p", group("g0", 7, c0, PASS));
        PipelineStatus s = ok(agent().updatePipeline(update("p", group("g0", 7, c0, PASS), group("g1", 8, c1, PASS))));
        assertEquals(2, s.getGeneration());
        // where the update's time went, as the scaling history shows it
        assertEquals(List.of("wait", "build", "copy", "take-over", "adopt+steer", "retire"), s.getStepsList()
                .stream().map(StepTime::getName).collect(Collectors.toList()));
        assertEquals(List.of("g0", "g1"), s.getGroupsList().stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toList()));
        assertEquals(Set.of("p/g0 tag 7 core " + c0, "p/g1 tag 8 core " + c1), running());
        s = ok(agent().updatePipeline(update("p", group("g1", 8, c1, PASS))));
        assertEquals(3, s.getGeneration());
        assertEquals(Set.of("p/g1 tag 8 core " + c1), running());
        assertEquals(List.of(8), ok(agent().getResources()).getTagsInUseList());
    }

    @Test
    public void updatingAnUnknownPipelineIsNotFound() throws Exception {
        assertFails(Code.NOT_FOUND, agent().updatePipeline(update("p", group("g0", 7, workers.get(0), PASS))));
        assertEquals(Set.of(), running());
    }

    @Test
    public void aBadUpdateIsInvalidArgumentAndKeepsThePipeline() throws Exception {
        int c = workers.get(0);
        deploy("p", group("g0", 7, c, PASS));
        List<UpdatePipelineRequest> bad = List.of(
                update("p"),                                                             // no group
                update("p", group("g1", 8, c, "input -> -> [0]output;")),                 // Click syntax
                update("p", group("g1", 8, c, PASS).toBuilder().addStateFrom("nope").build()), // unknown source
                update("p", group("g1", 8, c, PASS)).toBuilder().addEgress(Egress.newBuilder().setNic("nonic0"))
                        .build());
        for (UpdatePipelineRequest r : bad) {
            AgentException e = failure(agent().updatePipeline(r));
            assertEquals(r + e.getMessage(), Code.INVALID_ARGUMENT, e.code());
            assertEquals(Set.of("p/g0 tag 7 core " + c), running());
        }
    }

    /** A kept group (same spec) keeps its flows; a new group with state_from copies its sources' (filtered). */
    @Test
    public void updateKeepsAKeptGroupsStateAndCopiesStateFrom() throws Exception {
        int c0 = workers.get(0);
        int c1 = workers.get(1);
        deploy("p", group("g0", 7, c0, NAPT));
        ok(agent().importState(importOf("p", "g0", false, flow(2000, 3000), flow(2001, 3001))));
        GroupSpec odd = group("g1", 8, c1, NAPT).toBuilder().addStateFrom("g0")
                .setStateFilter(PortBits.newBuilder().setMask(1).setValue(1)).build();
        ok(agent().updatePipeline(update("p", group("g0", 7, c0, NAPT), odd)));
        assertEquals(java.util.Map.of(2000, 3000, 2001, 3001), flows("p", "g0"));
        assertEquals(java.util.Map.of(2001, 3001), flows("p", "g1"));
        ok(agent().updatePipeline(update("p", group("g1", 8, c1, NAPT))));
        assertFails(Code.NOT_FOUND, agent().exportState("p", "g0"));
        assertEquals(java.util.Map.of(2001, 3001), flows("p", "g1"));
    }

    @Test
    public void anUpdateTakingAnotherPipelinesTagIsAlreadyExists() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), PASS));
        deploy("q", group("g0", 8, workers.get(1), PASS));
        assertFails(Code.ALREADY_EXISTS, agent().updatePipeline(update("p", group("g0", 8, workers.get(0), PASS))));
        assertEquals(Set.of("p/g0 tag 7 core " + workers.get(0), "q/g0 tag 8 core " + workers.get(1)), running());
    }

    /** A merge: one new group takes the flows of two retired ones; GetStats counts them. */
    @Test
    public void aNewGroupMayTakeTheStateOfSeveralSources() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), NAPT), group("g1", 8, workers.get(1), NAPT));
        ok(agent().importState(importOf("p", "g0", false, flow(2000, 3000))));
        ok(agent().importState(importOf("p", "g1", false, flow(2001, 3001))));
        ok(agent().updatePipeline(update("p", group("g2", 9, workers.get(0), NAPT).toBuilder()
                .addStateFrom("g0").addStateFrom("g1").build())));
        assertEquals(Set.of("p/g2 tag 9 core " + workers.get(0)), running());
        assertEquals(java.util.Map.of(2000, 3000, 2001, 3001), flows("p", "g2"));
        assertEquals(2, ok(agent().getStats("p")).getGroups(0).getFlowState(0).getFlows());
    }

    // ---- remove ---------------------------------------------------------------------------------------------

    @Test
    public void removeStopsThePipelineAndFreesItsCoresAndTags() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), NAPT));
        deploy("q", group("g0", 8, workers.get(1), PASS));
        ok(agent().removePipeline("p"));
        assertEquals(Set.of("q/g0 tag 8 core " + workers.get(1)), running());
        ServerResources res = ok(agent().getResources());
        assertEquals(List.of(8), res.getTagsInUseList());
        assertEquals("", res.getCoresList().stream().filter(c -> c.getId() == workers.get(0)).findFirst().get()
                .getPipelineId());
        assertFails(Code.NOT_FOUND, agent().exportState("p", "g0"));
        deploy("p", group("g0", 7, workers.get(0), PASS)); // its id and tag are free again
    }

    @Test
    public void removingAnAbsentPipelineIsNotFound() throws Exception {
        deploy("q", group("g0", 8, workers.get(0), PASS));
        assertFails(Code.NOT_FOUND, agent().removePipeline("p"));
        assertFails(Code.INVALID_ARGUMENT, agent().removePipeline(""));
        assertEquals(Set.of("q/g0 tag 8 core " + workers.get(0)), running());
    }

    // ---- fencing (owner_token) ------------------------------------------------------------------------------

    /**
     * A request with an owner token older than the newest the agent has seen for the pipeline is ABORTED naming the
     * pipeline and both tokens, and changes nothing; a newer one becomes the newest; 0 is unfenced; tokens outlive the
     * pipeline's removal and are per pipeline.
     */
    @Test
    public void anOlderOwnerTokenIsAbortedAndChangesNothing() throws Exception {
        int c = workers.get(0);
        ok(agent().deployPipeline(pipeline("p", group("g0", 7, c, PASS)).toBuilder().setOwnerToken(5).build()));
        ok(agent().removePipeline(org.metron.agent.v1.RemovePipelineRequest.newBuilder().setPipelineId("p")
                .setOwnerToken(6).build()));
        PipelineStatus s = ok(agent().deployPipeline(pipeline("p", group("g1", 8, c, PASS)).toBuilder()
                .setOwnerToken(6).build()));
        assertEquals(6, s.getOwnerToken());
        Set<String> before = running();

        AgentException e = failure(agent().removePipeline(org.metron.agent.v1.RemovePipelineRequest.newBuilder()
                .setPipelineId("p").setOwnerToken(5).build()));
        assertEquals(Code.ABORTED, e.code());
        assertTrue(e.getMessage(), e.getMessage().endsWith("RemovePipeline of pipeline p refused: owner token 5 is "
                + "older than 6, the newest this agent has seen for it (another controller instance owns the chain)"));
        assertFails(Code.ABORTED, agent().updatePipeline(update("p", group("g0", 7, c, PASS)).toBuilder()
                .setOwnerToken(5).build()));
        assertFails(Code.ABORTED, agent().deployPipeline(pipeline("p", group("g0", 7, c, PASS)).toBuilder()
                .setOwnerToken(5).build()));
        assertEquals(before, running());
        assertEquals(6, ok(agent().listPipelines()).getPipelines(0).getOwnerToken());

        // unfenced: admitted, the newest stays; another pipeline has its own
        ok(agent().updatePipeline(update("p", group("g1", 8, c, PASS))));
        ok(agent().deployPipeline(pipeline("q", group("g0", 9, c, PASS)).toBuilder().setOwnerToken(1).build()));
        // the newest outlives the pipeline
        ok(agent().removePipeline(org.metron.agent.v1.RemovePipelineRequest.newBuilder().setPipelineId("p")
                .setOwnerToken(7).build()));
        assertFails(Code.ABORTED, agent().deployPipeline(pipeline("p", group("g0", 7, c, PASS)).toBuilder()
                .setOwnerToken(6).build()));
        assertEquals(Set.of("q/g0 tag 9 core " + c), running());
    }
}
