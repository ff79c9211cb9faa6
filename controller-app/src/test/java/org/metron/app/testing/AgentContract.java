package org.metron.app.testing;

import org.junit.Test;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.FiveTuple;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.TagType;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.metron.app.testing.ContractCalls.assertFails;
import static org.metron.app.testing.ContractCalls.batch;
import static org.metron.app.testing.ContractCalls.failure;
import static org.metron.app.testing.ContractCalls.importOf;
import static org.metron.app.testing.ContractCalls.ok;
import static org.metron.app.testing.ContractCalls.waitFor;
import static org.metron.app.testing.NaptFlows.flow;
import static org.metron.app.testing.NaptFlows.ip;

/**
 * What the controller may rely on from an agent (agent.proto), call by call and error by error, through the
 * client interface the controller uses. One subclass runs it against the real metron-agent process, one against
 * {@link TestAgent}, the in-memory agent most controller tests use: where they disagree, the fake has drifted
 * from the agent the controller really talks to. Every case asserts the status code and what can be seen after
 * the call (a failed call changes nothing, agent.proto says).
 * <p>
 * One suite in one class chain, so that each subclass runs every case on one agent: the system, statistics and
 * flow-state calls here; the pipeline calls in {@link PipelineContract}, the NIC rule calls in {@link
 * NicRuleContract}, black-box NF cases in {@link BlackBoxContract}, what they stand on in {@link
 * AgentContractFixture}.
 * <p>
 * The agent under test offers worker cores and a NIC with a rule table (a tag-steered NIC); the cases read both
 * from GetResources rather than assuming ids, as the controller's placement does.
 */
public abstract class AgentContract extends NicRuleContract {
    // ---- system ---------------------------------------------------------------------------------------------

    @Test
    public void resourcesOfAnIdleAgentShowFreeCoresAndNoTags() throws Exception {
        ServerResources res = ok(agent().getResources());
        for (Core c : res.getCoresList()) {
            assertTrue(c.toString(), c.getAvailable());
            assertEquals(c.toString(), "", c.getPipelineId());
        }
        assertEquals(List.of(), res.getTagsInUseList());
        Nic steered = res.getNicsList().stream().filter(n -> n.getName().equals(nic)).findFirst().get();
        assertTrue(steered.toString(), steered.getTagTypesList().contains(TagType.TAG_MAC));
    }

    @Test
    public void healthServesWithOneBootIdUntilARestart() throws Exception {
        long boot = ok(agent().health()).getBootId();
        assertTrue(ok(agent().health()).getServing());
        assertEquals(boot, ok(agent().health()).getBootId());
        deploy("p", group("g0", 7, workers.get(0), PASS));
        ok(agent().installNicRules(batch(rule(1, 7, workers.get(0)))));

        stop();
        assertFails(Code.UNAVAILABLE, agent().health());
        assertFails(Code.UNAVAILABLE, agent().removePipeline("p"));
        restart();
        assertTrue(ok(agent().health()).getServing());
        assertNotEquals("a restart is a new boot id", boot, ok(agent().health()).getBootId());
        assertEquals("a restarted agent runs nothing", Set.of(), running());
        assertEquals("nor holds NIC rules", Set.of(), ruleIds());
    }

    // ---- statistics -----------------------------------------------------------------------------------------

    @Test
    public void statsCoverEveryWorkerCoreAndTheAskedPipelinesGroups() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), NAPT));
        deploy("q", group("g0", 8, workers.get(1), PASS));
        Stats all = ok(agent().getStats(""));
        assertEquals(workers, all.getCoresList().stream().map(CoreStats::getCore).collect(Collectors.toList()));
        Function<Stats, Set<String>> groups = st -> st.getGroupsList().stream()
                .map(g -> g.getPipelineId() + "/" + g.getGroupId() + " core " + g.getCore())
                .collect(Collectors.toSet());
        assertEquals(Set.of("p/g0 core " + workers.get(0), "q/g0 core " + workers.get(1)), groups.apply(all));
        Stats p = ok(agent().getStats("p"));
        assertEquals(Set.of("p/g0 core " + workers.get(0)), groups.apply(p));
        GroupStats g = p.getGroups(0);
        assertEquals(List.of(7), g.getClassesList().stream().map(cs -> cs.getClassId())
                .collect(Collectors.toList()));
        assertEquals(List.of("rw SynthRewriter"), g.getFlowStateList().stream()
                .map(f -> f.getElement() + " " + f.getKind()).collect(Collectors.toList()));
    }

    @Test
    public void statsOfAnUnknownPipelineAreNotFound() throws Exception {
        assertFails(Code.NOT_FOUND, agent().getStats("p"));
    }

    @Test
    public void theLoadStreamReportsEveryWorkerCoreUntilClosed() throws Exception {
        List<Stats> reports = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        try (AutoCloseable sub = agent().streamLoad(20, reports::add, errors::add)) {
            waitFor(() -> reports.size() >= 3);
        }
        assertEquals(List.of(), errors);
        for (Stats s : reports) {
            assertEquals(workers, s.getCoresList().stream().map(CoreStats::getCore).collect(Collectors.toList()));
            s.getCoresList().forEach(c -> assertTrue(c.toString(), c.getLoad() >= 0 && c.getLoad() <= 1));
        }
        int seen = reports.size();
        Thread.sleep(200);
        assertTrue("no report after close", reports.size() <= seen + 1);
    }

    /** What the load monitor relies on to resubscribe: the loss is reported, the reports come back. */
    @Test
    public void aLoadStreamReportsItsAgentsLossAndResumesAfterARestart() throws Exception {
        List<Stats> reports = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        try (AutoCloseable sub = agent().streamLoad(20, reports::add, errors::add)) {
            waitFor(() -> !reports.isEmpty());
            stop();
            waitFor(() -> !errors.isEmpty());
            assertEquals(errors.get(0).toString(), Code.UNAVAILABLE, ((AgentException) errors.get(0)).code());
            restart();
            int before = reports.size();
            waitFor(() -> reports.size() > before);
        }
    }

    @Test
    public void aLoadStreamWithAnIntervalBelowTenMsFailsInvalidArgument() throws Exception {
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        List<Stats> reports = new ArrayList<>();
        try (AutoCloseable sub = agent().streamLoad(5, reports::add, errors::add)) {
            waitFor(() -> !errors.isEmpty());
        }
        assertEquals(Code.INVALID_ARGUMENT, ((AgentException) errors.get(0)).code());
        assertEquals(List.of(), reports);
    }

    // ---- flow state -----------------------------------------------------------------------------------------

    @Test
    public void aNewStatefulGroupExportsOneEmptyTablePerStatefulElement() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), NAPT), group("g1", 8, workers.get(1), PASS));
        StateSnapshot s = ok(agent().exportState("p", "g0"));
        assertEquals("p", s.getPipelineId());
        assertEquals("g0", s.getGroupId());
        assertEquals(List.of("rw SynthRewriter 0"), s.getTablesList().stream()
                .map(t -> t.getElement() + " " + t.getKind() + " " + t.getEntriesCount()).collect(Collectors.toList()));
        assertEquals(List.of(), ok(agent().exportState("p", "g1")).getTablesList());
    }

    @Test
    public void exportingAnUnknownPipelineOrGroupIsNotFound() throws Exception {
        assertFails(Code.NOT_FOUND, agent().exportState("p", "g0"));
        deploy("p", group("g0", 7, workers.get(0), NAPT));
        assertFails(Code.NOT_FOUND, agent().exportState("p", "g9"));
        assertFails(Code.INVALID_ARGUMENT, agent().exportState("", "g0"));
    }

    @Test
    public void importReplacesOrMergesAGroupsFlows() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), NAPT));
        assertEquals(2, ok(agent().importState(importOf("p", "g0", false, flow(2000, 3000), flow(2001, 3001))))
                .getEntries());
        assertEquals(java.util.Map.of(2000, 3000, 2001, 3001), flows("p", "g0"));
        // merge: a flow already there stays as it is
        long merged = ok(agent().importState(importOf("p", "g0", true, flow(2001, 4001), flow(2002, 3002))))
                .getEntries();
        assertEquals(java.util.Map.of(2000, 3000, 2001, 3001, 2002, 3002), flows("p", "g0"));
        assertEquals(1, merged);
        // replace: only the snapshot's flows remain
        assertEquals(1, ok(agent().importState(importOf("p", "g0", false, flow(2005, 3005)))).getEntries());
        assertEquals(java.util.Map.of(2005, 3005), flows("p", "g0"));
    }

    @Test
    public void importingIntoAnUnknownPipelineOrGroupIsNotFound() throws Exception {
        assertFails(Code.NOT_FOUND, agent().importState(importOf("p", "g0", true, flow(2000, 3000))));
        deploy("p", group("g0", 7, workers.get(0), NAPT));
        assertFails(Code.NOT_FOUND, agent().importState(importOf("p", "g0", true, flow(2000, 3000)).toBuilder()
                .setTargetGroupId("g9").build()));
        assertEquals(java.util.Map.of(), flows("p", "g0"));
    }

    @Test
    public void importingATableTheGroupDoesNotHaveIsInvalidArgument() throws Exception {
        deploy("p", group("g0", 7, workers.get(0), NAPT));
        ImportStateRequest good = importOf("p", "g0", true, flow(2000, 3000));
        StateTable rw = good.getSnapshot().getTables(0);
        List<StateTable> bad = List.of(rw.toBuilder().setElement("nope").build(),
                rw.toBuilder().setKind("IPRewriter").build(),
                rw.toBuilder().setEntries(0, flow(2000, 3000).toBuilder().setKey(FiveTuple.newBuilder()
                        .setSrcIp(ip(1, 2, 3, 4)))).build());
        for (StateTable t : bad) {
            ImportStateRequest r = good.toBuilder().setSnapshot(good.getSnapshot().toBuilder().setTables(0, t))
                    .build();
            AgentException e = failure(agent().importState(r));
            assertEquals(t + e.getMessage(), Code.INVALID_ARGUMENT, e.code());
        }
        assertEquals(java.util.Map.of(), flows("p", "g0"));
    }
}
