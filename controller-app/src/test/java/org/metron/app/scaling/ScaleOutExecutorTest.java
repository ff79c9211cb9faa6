package org.metron.app.scaling;

import org.junit.After;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.impl.AgentWatch;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.TagKey;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.NaptFlows;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Scale-out and merge back (docs/scaling.md#scale-out) against two real metron-agents, one per server (real
 * gRPC, DeployPipeline/UpdatePipeline, ExportState/ImportState), with the ONOS-style switch stand-in: the chain
 * may use one core on its server ({@code maxCpuCores: 1}), so its split goes to the other server. Checks groups,
 * servers, tags, the offload device's re-tag toward the other server, transit and return rules, flow state moved
 * both ways (whole classes and a source-port slice), rollback on a refused re-tag, recovery after a crash at it.
 */
public class ScaleOutExecutorTest {
    /** A third switch, behind s2 (s2 port 4 - s3 port 1): an egress point there puts the reply rules on it. */
    private static final String S3 = "of:0000000000000003";
    private static final DeviceId D3 = DeviceId.deviceId(S3);
    private static RealAgent first;
    private static RealAgent second;

    private final List<Rig> rigs = new ArrayList<>();

    @BeforeClass
    public static void startAgents() throws Exception {
        first = RealAgent.startWorkers("scaleout-a", 2);
        second = RealAgent.startWorkers("scaleout-b", 2);
    }

    @AfterClass
    public static void stopAgents() throws Exception {
        for (RealAgent a : new RealAgent[]{first, second}) {
            if (a != null) {
                a.close();
            }
        }
    }

    private static String nicOf(AgentClient a) throws Exception {
        return a.getResources().get(10, TimeUnit.SECONDS).getNics(0).getName();
    }

    /** One chain of four UDP classes (ScalingExecutorTest#compiled) on one of two servers, one core at most. */
    final class Rig {
        final TestSwitches switches = new TestSwitches();
        final ScalingExecutorTest.CrashingSwitches crashing = new ScalingExecutorTest.CrashingSwitches(switches);
        final LocalStoreFactory factory = new LocalStoreFactory();
        final ChainStore store = new ChainStore(factory, switches);
        final ScalingStore scaling = new ScalingStore(factory);
        final TestServers servers = new TestServers();
        /** Shared by the chain manager and a test's scaling manager, as the hosts share theirs (its term fences). */
        final SingleInstanceLeadership leadership = new SingleInstanceLeadership();
        final ChainManager manager;
        final ChainId chain;
        final MetronServer home;
        final MetronServer away;

        final Synthesis synthesis = (spec, profile) -> ScalingExecutorTest.compiled(spec.name(), profile);
        /** s1 - s2 - servers as in every scaling test, and s3 (s2 port 4 - s3 port 1) for an egress point there. */
        final TestNetwork network = Fixtures.network(0).device(S3, DeviceRole.OPENFLOW_SWITCH, 1000)
                .cable(Fixtures.S2, 4, S3, 1);

        Rig(String name) throws Exception {
            this(name, first.client(), second.client(), Fixtures.S1 + "/3");
        }

        /** Leaving (and, for a chain with a reply ingress, answered) at {@code egressPoint}. */
        Rig(String name, String egressPoint) throws Exception {
            this(name, first.client(), second.client(), egressPoint);
        }

        Rig(String name, AgentClient a, AgentClient b) throws Exception {
            this(name, a, b, Fixtures.S1 + "/3");
        }

        /** On the servers of two given agents' clients (server a and server b). */
        Rig(String name, AgentClient a, AgentClient b, String egressPoint) throws Exception {
            servers.add(new MetronServer(DeviceId.deviceId("metron:a"), a, Map.of(nicOf(a),
                    ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
            servers.add(new MetronServer(DeviceId.deviceId("metron:b"), b, Map.of(nicOf(b),
                    ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/11"))));
            Duration t = Duration.ofSeconds(10);
            manager = new ChainManager(store, servers, switches, leadership,
                    new PlacementEngine(servers, network, switches, new Random(1), t),
                    new RulePlanner(Fixtures.APP, network), new Deployer(switches, t), t, synthesis);
            chain = ChainId.of(name);
            String json = Fixtures.chainJson(name, "mac", 1, 1).replace("\"maxCpuCores\": 4", "\"maxCpuCores\": 1")
                    .replace("\"egressPoint\": \"" + Fixtures.S1 + "/3\"", "\"egressPoint\": \"" + egressPoint + "\"");
            assertTrue(json, json.contains("\"maxCpuCores\": 1") && json.contains(egressPoint));
            assertEquals(ChainState.ACTIVE, manager.submit(json).state());
            DeviceId on = placement().server().get();
            home = servers.server(on).get();
            away = servers.servers().stream().filter(s -> !s.id().equals(on)).findFirst().get();
            rigs.add(this);
        }

        ScalingExecutor executor() {
            return new ScalingExecutor(store, scaling, servers, crashing, manager, Fixtures.APP,
                    Duration.ofSeconds(10), System::currentTimeMillis, new RulePlanner(Fixtures.APP, network),
                    new Random(1), leadership);
        }

        Placement placement() {
            return store.placements().get(chain).get().value();
        }

        /** S2's port toward the other server: which of the two is the chain's server is the placement's choice. */
        PortNumber awayPort() {
            return away.attachments().values().iterator().next().port();
        }

        GroupAssignment group(String id) {
            return placement().groups().stream().filter(g -> g.groupId().equals(id)).findFirst().get();
        }

        /** Classes 1 and 2 (the split's choice at these rates) scaled out to the other server as g0.1. */
        GroupAssignment spreadWholeClasses() {
            ScalingEvent e = executor().split(chain, "g0", Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0), "test",
                    System.currentTimeMillis());
            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            GroupAssignment moved = group("g0.1");
            assertEquals(away.id(), moved.server().get());
            return moved;
        }

        /**
         * Flows from source ports 5000 and 5001 on the chain's server, then class 0 divided by source-port bit 0:
         * the half with the bit set (5001's) scaled out to the other server as g0.1.
         */
        GroupAssignment sliceOut() throws Exception {
            importFlow(home, "g0", 5000, 2000);
            importFlow(home, "g0", 5001, 2001);
            ScalingEvent e = executor().splitClass(chain, "g0", 0, 0, "test", System.currentTimeMillis());
            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            GroupAssignment moved = group("g0.1");
            assertTrue(moved.remote());
            return moved;
        }

        List<GroupStatus> groups(MetronServer s) throws Exception {
            return s.agent().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().stream()
                    .filter(p -> p.getPipelineId().equals(chain.name())).flatMap(p -> p.getGroupsList().stream())
                    .collect(Collectors.toList());
        }

        void importFlow(MetronServer s, String group, int srcPort, int mappedPort) throws Exception {
            s.agent().importState(ImportStateRequest.newBuilder().setSnapshot(StateSnapshot.newBuilder()
                    .setPipelineId(chain.name()).setGroupId(group).addTables(StateTable.newBuilder().setElement("rw")
                            .setKind("SynthRewriter").addEntries(NaptFlows.flow(srcPort, mappedPort))))
                    .setMerge(true).build()).get(10, TimeUnit.SECONDS);
        }

        /** NAPT mappings of a group on a server: source port → translated source port. */
        Map<Integer, Integer> flows(MetronServer s, String group) throws Exception {
            Map<Integer, Integer> out = new TreeMap<>();
            for (StateTable t : s.agent().exportState(chain.name(), group).get(10, TimeUnit.SECONDS)
                    .getTablesList()) {
                for (FlowEntry e : t.getEntriesList()) {
                    out.put(e.getKey().getSrcPort(), e.getMapped().getSrcPort());
                }
            }
            return out;
        }

        /** The offload rules on D1 writing {@code tag}, each with its output port. */
        Map<FlowRule, PortNumber> offloadRulesFor(Tag tag) {
            Map<FlowRule, PortNumber> out = new java.util.LinkedHashMap<>();
            for (FlowRule r : switches.rules(Fixtures.D1)) {
                boolean tags = false;
                PortNumber port = null;
                for (Instruction i : r.treatment().allInstructions()) {
                    if (i instanceof ModEtherInstruction && RuleRetagger.taggedClass(r, tag).isPresent()) {
                        tags = true;
                    } else if (i instanceof Instructions.OutputInstruction) {
                        port = ((Instructions.OutputInstruction) i).port();
                    }
                }
                if (tags) {
                    out.put(r, port);
                }
            }
            return out;
        }

        /** Every rule on s1, s2 and s3 (id to actions): the same ids and actions are the same switch state. */
        Map<FlowId, TrafficTreatment> allRules() {
            Map<FlowId, TrafficTreatment> out = new java.util.HashMap<>();
            for (DeviceId d : List.of(Fixtures.D1, Fixtures.D2, D3)) {
                switches.rules(d).forEach(r -> out.put(r.id(), r.treatment()));
            }
            return out;
        }

        /** The reply rules as the switches hold them (the store says which they are), by the class they tag. */
        Map<Integer, FlowRule> replyRules() {
            Map<Integer, FlowRule> out = new TreeMap<>();
            store.installed().get(chain).get().value().switchRules().stream().filter(r -> r.role() == Role.REPLY)
                    .forEach(r -> switches.rules(r.rule().deviceId()).stream()
                            .filter(x -> x.id().equals(r.rule().id())).findFirst()
                            .ifPresent(x -> out.put((int) (destination(x).toLong() & 0xffff), x)));
            return out;
        }

        /** Every rule the store says the chain has is on its switch, exactly, and there are no others. */
        void assertStoreTruthful() {
            List<org.metron.app.store.InstalledRule> rules = store.installed().get(chain).get().value().switchRules();
            assertEquals(switches.total(), rules.size());
            for (org.metron.app.store.InstalledRule r : rules) {
                assertTrue(r.toString(), switches.rules(r.rule().deviceId()).stream()
                        .anyMatch(x -> x.exactMatch(r.rule())));
            }
        }

        List<FlowRule> s2Rules(PortNumber inPort) {
            return switches.rules(Fixtures.D2).stream().filter(r -> r.selector().criteria().stream()
                    .anyMatch(c -> c.toString().equals("IN_PORT:" + inPort))).collect(Collectors.toList());
        }
    }

    @After
    public void removeChains() throws Exception {
        for (Rig r : rigs) {
            if (r.manager.chain(r.chain).isPresent()) {
                r.manager.remove(r.chain);
            }
            assertTrue(r.groups(r.home).isEmpty());
            assertTrue("nothing of the chain is left on the other server", r.groups(r.away).isEmpty());
            assertEquals("every rule the chain ever installed is gone", 0, r.switches.total());
        }
    }

    @Test
    public void removingAChainSpreadOverTwoServersRemovesItsHalfOnTheOtherServerToo() throws Exception {
        Rig rig = new Rig("scaleout-rm");
        GroupAssignment moved = rig.spreadWholeClasses();
        assertEquals(1, rig.groups(rig.away).size());

        rig.manager.remove(rig.chain);

        assertTrue("the other server's pipeline is gone", rig.groups(rig.away).isEmpty());
        assertFalse(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
        // removeChains (after each test) checks the switches hold nothing of the chain
    }

    @Test
    public void noCoreLeftOnTheServerScalesOutWithTheFlowsAndMergesBackWithThoseMadeThere() throws Exception {
        Rig rig = new Rig("scaleout");
        GroupAssignment g0 = rig.group("g0");
        PortNumber home = rig.offloadRulesFor(g0.tag()).values().iterator().next();
        int before = rig.switches.total();
        rig.importFlow(rig.home, "g0", 5000, 2000);
        rig.importFlow(rig.home, "g0", 5001, 2001);
        Map<Integer, Double> rates = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0);

        ScalingEvent e = rig.executor().split(rig.chain, "g0", rates, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        GroupAssignment moved = rig.group("g0.1");
        assertEquals(rig.away.id(), moved.server().get());
        assertEquals(List.of(1, 2), moved.classIds());
        assertEquals(List.of(0, 3), rig.group("g0").classIds());
        assertFalse(rig.group("g0").remote());
        assertEquals("the chain's server still holds one core", List.of(g0.core()), rig.placement().cores());
        assertEquals(List.of(moved.core()), rig.placement().coresOn(rig.away.id()));
        // the other agent runs the moved half, with the group's flows (whole classes: the whole table)
        assertEquals(List.of("g0.1"), rig.groups(rig.away).stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toList()));
        assertEquals(List.of("g0"), rig.groups(rig.home).stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toList()));
        assertEquals(Map.of(5000, 2000, 5001, 2001), rig.flows(rig.away, "g0.1"));
        assertEquals(List.of(0, 3), rig.groups(rig.home).get(0).getClassIdsList());
        // the offload device tags the moved classes for the new tag and sends them toward the other server
        Map<FlowRule, PortNumber> out = rig.offloadRulesFor(moved.tag());
        assertEquals(2, out.size());
        assertTrue(out.toString(), out.values().stream().allMatch(p -> p.equals(PortNumber.portNumber(2))));
        assertEquals(2, rig.offloadRulesFor(g0.tag()).size());
        // S2: the new tag from S1 to the other server's port, its output from there to the egress point
        List<FlowRule> fromS1 = rig.s2Rules(PortNumber.portNumber(1)).stream()
                .filter(r -> RuleRetagger.matchesGroup(r, moved.tag())).collect(Collectors.toList());
        assertEquals(1, fromS1.size());
        assertTrue(fromS1.get(0).treatment().toString(), fromS1.get(0).treatment().allInstructions().contains(
                Instructions.createOutput(rig.awayPort())));
        assertEquals("one return rule from the other server", 1, rig.s2Rules(rig.awayPort()).size());
        assertEquals(before + 2, rig.switches.total());
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
        assertTrue(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
        assertTrue(rig.scaling.inProgress().isEmpty());
        assertTrue(e.steps(), e.steps().contains("remote agent"));
        // the operator's views say where each group runs (REST/CLI/GUI share these)
        com.fasterxml.jackson.databind.JsonNode view = org.metron.app.rest.MetronJson.placement(rig.placement())
                .get("groups");
        assertEquals(rig.home.id().toString(), view.get(0).get("server").asText());
        assertEquals(rig.away.id().toString(), view.get(1).get("server").asText());
        assertTrue(view.get(1).get("remote").asBoolean());

        // a flow the other server made, and one made on both (the chain's server's mapping wins)
        rig.importFlow(rig.away, "g0.1", 5002, 3002);
        rig.importFlow(rig.away, "g0.1", 5000, 3000);
        ScalingEvent m = rig.executor().merge(rig.chain, "g0.1", "g0", "test", System.currentTimeMillis());

        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals("the group on the chain's server is kept", List.of("g0", "g0.1"), m.groups());
        assertEquals(1, rig.placement().groups().size());
        assertEquals(List.of(0, 1, 2, 3), rig.group("g0").classIds());
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals(Map.of(5000, 2000, 5001, 2001, 5002, 3002), rig.flows(rig.home, "g0"));
        assertEquals(4, rig.offloadRulesFor(g0.tag()).size());
        assertTrue(rig.offloadRulesFor(g0.tag()).values().stream().allMatch(home::equals));
        assertEquals(before, rig.switches.total());
        assertTrue(rig.s2Rules(rig.awayPort()).isEmpty());
        assertFalse(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
        assertTrue(rig.scaling.inProgress().isEmpty());
    }

    /** The port share (index of count) a server's agent runs a group of the chain with; -1 when it has none. */
    private static int agentShare(Rig rig, MetronServer s, String group) throws Exception {
        GroupStatus g = rig.groups(s).stream().filter(x -> x.getGroupId().equals(group)).findFirst().orElseThrow();
        assertEquals(g.hasPortShare() ? GroupAssignment.PORT_SHARES : 0, g.getPortShare().getCount());
        return g.hasPortShare() ? g.getPortShare().getIndex() : -1;
    }

    @Test
    public void theHalvesOnTwoServersMapToDisjointPortSharesKeptAcrossTheStoreARestartAndAMerge() throws Exception {
        Rig rig = new Rig("scaleout-ports");
        assertEquals(0, rig.group("g0").portShare());
        assertEquals(0, agentShare(rig, rig.home, "g0"));

        ScalingEvent e = rig.executor().split(rig.chain, "g0", Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0),
                "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        GroupAssignment moved = rig.group("g0.1");
        assertTrue(moved.remote());
        // both halves run on core 0 of their server: the per-core division gave them the same ports
        assertEquals(rig.group("g0").core(), moved.core());
        assertEquals("the kept half keeps its share", 0, rig.group("g0").portShare());
        assertEquals("the new half on the other server takes another", 1, moved.portShare());
        // what each server's agent runs them with (ListPipelines reports the share it was given)
        assertEquals(0, agentShare(rig, rig.home, "g0"));
        assertEquals(1, agentShare(rig, rig.away, "g0.1"));
        // stored with the placement: a restarted controller reads the same shares
        Placement stored = rig.placement();
        Placement back = org.metron.app.store.MetronSerializers.NAMESPACE.deserialize(
                org.metron.app.store.MetronSerializers.NAMESPACE.serialize(stored));
        assertEquals(stored, back);
        assertEquals(List.of(0, 1), back.groups().stream().map(GroupAssignment::portShare)
                .collect(Collectors.toList()));
        ChainStore reopened = new ChainStore(rig.factory, rig.switches);
        assertEquals(stored, reopened.placements().get(rig.chain).get().value());

        // merged back by another executor (as after a restart): the kept group keeps share 0, whose ports the
        // absorbed mappings (share 1) do not collide with
        rig.importFlow(rig.away, "g0.1", 5002, 20000 + 1 * 4032);
        ScalingEvent m = rig.executor().merge(rig.chain, "g0.1", "g0", "test", System.currentTimeMillis());
        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals(0, rig.group("g0").portShare());
        assertEquals(0, agentShare(rig, rig.home, "g0"));
        assertEquals(Map.of(5002, 20000 + 4032), rig.flows(rig.home, "g0"));

        // out again: the new half takes the lowest share no group holds, on the other server as before
        e = rig.executor().split(rig.chain, "g0", Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0), "test",
                System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals(1, rig.group("g0.1").portShare());
        assertEquals(1, agentShare(rig, rig.away, "g0.1"));
        assertEquals(0, agentShare(rig, rig.home, "g0"));
    }

    /**
     * Two groups of one chain on the other server (its agent has two worker cores): the second scale-out joins the
     * pipeline there by an update, the first group runs on with its flows; merging one back retires it there by
     * an update (the other keeps its flows), merging the last removes the pipeline.
     */
    @Test
    public void twoGroupsScaledOutToOneServerShareItsPipelineAndComeBackOneByOne() throws Exception {
        Rig rig = new Rig("scaleout-two");
        rig.spreadWholeClasses();
        assertEquals(List.of(0, 3), rig.group("g0").classIds());
        rig.importFlow(rig.away, "g0.1", 5002, 3002);
        int rulesAfterFirst = rig.switches.total();

        ScalingEvent second = rig.executor().split(rig.chain, "g0", Map.of(0, 500.0, 3, 400.0), "test",
                System.currentTimeMillis());

        assertEquals(second.detail(), ScalingEvent.Outcome.DONE, second.outcome());
        List<GroupAssignment> away = rig.placement().groups().stream().filter(GroupAssignment::remote)
                .collect(Collectors.toList());
        assertEquals(away.toString(), 2, away.size());
        assertTrue(away.stream().allMatch(g -> g.server().get().equals(rig.away.id())));
        assertEquals("two cores on the other server", 2, rig.placement().coresOn(rig.away.id()).size());
        GroupAssignment other = away.stream().filter(g -> !g.groupId().equals("g0.1")).findFirst().get();
        assertEquals(Set.of("g0.1", other.groupId()), rig.groups(rig.away).stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toSet()));
        assertEquals("the first group ran on with its flows", Integer.valueOf(3002),
                rig.flows(rig.away, "g0.1").get(5002));
        assertEquals(1, rig.offloadRulesFor(other.tag()).size());
        assertEquals("toward S2, as g0.1's", Set.of(PortNumber.portNumber(2)),
                new java.util.HashSet<>(rig.offloadRulesFor(other.tag()).values()));
        assertEquals("one more transit rule (the return rules are shared)", rulesAfterFirst + 1,
                rig.switches.total());

        ScalingEvent m = rig.executor().merge(rig.chain, "g0", other.groupId(), "test", System.currentTimeMillis());
        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals(List.of("g0.1"), rig.groups(rig.away).stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toList()));
        assertEquals(Integer.valueOf(3002), rig.flows(rig.away, "g0.1").get(5002));
        assertEquals(rulesAfterFirst, rig.switches.total());
        assertEquals("the shared return rule stays for g0.1", 1, rig.s2Rules(rig.awayPort()).size());

        m = rig.executor().merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());
        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals(Integer.valueOf(3002), rig.flows(rig.home, "g0").get(5002));
        assertEquals(List.of(0, 1, 2, 3), rig.group("g0").classIds().stream().sorted().collect(Collectors.toList()));
        assertTrue(rig.s2Rules(rig.awayPort()).isEmpty());
    }

    @Test
    public void aClassSliceScalesOutWithItsFlowsOnlyAndJoinsBackToTheOriginalRules() throws Exception {
        Rig rig = new Rig("scaleout-slice");
        Set<Object> original = rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id).collect(Collectors.toSet());
        GroupAssignment moved = rig.sliceOut();
        assertEquals(List.of(0), moved.classIds());
        assertEquals("only the flows of its slice (source port bit 0 set)", Map.of(5001, 2001),
                rig.flows(rig.away, "g0.1"));
        assertEquals(1, rig.offloadRulesFor(moved.tag()).size());
        assertNotEquals(original, rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id)
                .collect(Collectors.toSet()));

        ScalingEvent m = rig.executor().merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());

        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals(Map.of(5000, 2000, 5001, 2001), rig.flows(rig.home, "g0"));
        assertTrue(rig.group("g0").slices().isEmpty());
        assertEquals(original, rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id).collect(Collectors.toSet()));
        assertTrue(rig.groups(rig.away).isEmpty());
    }

    @Test
    public void aRefusedReTagRollsTheOtherServerBack() throws Exception {
        Rig rig = new Rig("scaleout-refused");
        Placement before = rig.placement();
        int rules = rig.switches.total();
        rig.crashing.crashOn = Fixtures.D1;
        rig.crashing.failInstead = true;
        try {
            rig.executor().split(rig.chain, "g0", Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test",
                    System.currentTimeMillis());
            fail("the refused re-tag should fail the scale-out");
        } catch (MetronException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("(rolled back)"));
        }
        assertEquals(before, rig.placement());
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals(rules, rig.switches.total());
        assertEquals(1, rig.store.tags().snapshot().size());
        assertEquals(ScalingEvent.Outcome.ROLLED_BACK, rig.scaling.history(rig.chain).get(0).outcome());
    }

    @Test
    public void aControllerThatStoppedAtTheReTagCompletesTheScaleOutOnRestart() throws Exception {
        Rig rig = new Rig("scaleout-crash");
        rig.importFlow(rig.home, "g0", 5000, 2000);
        rig.crashing.crashOn = Fixtures.D1;
        try {
            rig.executor().split(rig.chain, "g0", Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test",
                    System.currentTimeMillis());
            fail("the controller should have crashed");
        } catch (IllegalStateException expected) {
            // the journal holds the operation at SWITCHED
        }
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(1, recovered.size());
        assertEquals(recovered.get(0).detail(), ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        GroupAssignment moved = rig.group("g0.1");
        assertTrue(moved.remote());
        assertEquals(2, rig.offloadRulesFor(moved.tag()).size());
        assertEquals(Map.of(5000, 2000), rig.flows(rig.away, "g0.1"));
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
        assertEquals(ScalingEvent.Outcome.DONE, rig.executor().merge(rig.chain, "g0", "g0.1", "test",
                System.currentTimeMillis()).outcome());
    }
    /** What identifies a server's groups of the chain as its agent reports them: id, tag, core, classes. */
    private static List<String> described(List<GroupStatus> groups) {
        return groups.stream().map(g -> g.getGroupId() + " tag " + g.getTag().getValue() + " core " + g.getCore()
                + " classes " + g.getClassIdsList()).collect(Collectors.toList());
    }

    private static GrpcAgentClient clientOf(int port) {
        return GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(port)
                .deadline(Duration.ofSeconds(5)).build());
    }

    private static int portOf(RealAgent a) {
        String target = a.client().target();
        return Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
    }

    /**
     * The agent of the server a class slice was scaled out to crashes (SIGKILL) and starts again on its port with
     * its state directory: the agent watch sees its new boot id and {@link ServerRecovery} deploys the scaled-out
     * group there again (same group, tag, core, classes, slice), filled with its flows from the agent's last
     * checkpoint; the switch rules still send the slice there, and the chain merges back with those flows.
     */
    /**
     * The next owner's rollback of a scale-out its previous owner left before the re-tag cannot remove the transit
     * rules (the switch's master died with that owner): the operation stays journalled with no history entry, and
     * a later try, once the switch accepts, rolls it back and records it once. Before, the rollback dropped the
     * journal entry whatever it left: the 3-node cluster test saw the chain with neither an operation in progress
     * nor a history entry, and the rules stayed.
     */
    @Test
    public void aRollbackThatLeavesRulesKeepsTheOperationJournalledUntilATryLaterUndoesIt() throws Exception {
        Rig rig = new Rig("scaleout-left");
        Placement before = rig.placement();
        int rules = rig.switches.total();
        rig.crashing.crashOn = Fixtures.D1;
        assertThrows(IllegalStateException.class, () -> rig.executor().split(rig.chain, "g0",
                Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test", System.currentTimeMillis()));
        ScalingOperation op = rig.scaling.inProgress().iterator().next();
        assertFalse("the scale-out adds transit rules", op.transitAdded().isEmpty());
        assertTrue(rig.switches.total() > rules);
        // its owner was killed after the transit rules, before it recorded the re-tag step
        rig.scaling.operations().put(rig.chain, op.at(ScalingOperation.Step.PIPELINE));
        rig.crashing.refuseRemoves = true;

        assertTrue(rig.executor().recover(c -> true).isEmpty());
        assertEquals(ScalingOperation.Step.PIPELINE, rig.scaling.inProgress().iterator().next().step());
        assertTrue(rig.scaling.history(rig.chain).isEmpty());

        rig.crashing.refuseRemoves = false;
        List<ScalingEvent> again = rig.executor().recover(c -> true);

        assertEquals(1, again.size());
        assertEquals(again.get(0).detail(), ScalingEvent.Outcome.ROLLED_BACK, again.get(0).outcome());
        assertTrue(rig.scaling.inProgress().isEmpty());
        assertEquals(again, rig.scaling.history(rig.chain));
        assertEquals(before, rig.placement());
        assertEquals(rules, rig.switches.total());
        assertTrue(rig.groups(rig.away).isEmpty());
    }

    /**
     * An owner that recorded its operation's end and died before removing its journal entry: the next owner finds
     * the entry in the history and only removes the journal entry (nothing run twice, no second entry).
     */
    @Test
    public void anOperationWhoseEndWasRecordedIsOnlyRemovedFromTheJournal() throws Exception {
        Rig rig = new Rig("scaleout-ended");
        rig.crashing.crashOn = Fixtures.D1;
        assertThrows(IllegalStateException.class, () -> rig.executor().split(rig.chain, "g0",
                Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test", System.currentTimeMillis()));
        ScalingOperation op = rig.scaling.inProgress().iterator().next();
        assertEquals(ScalingEvent.Outcome.DONE, rig.executor().recover(c -> true).get(0).outcome());
        Placement after = rig.placement();
        int rules = rig.switches.total();
        rig.scaling.operations().put(rig.chain, op);

        assertTrue(rig.executor().recover(c -> true).isEmpty());

        assertTrue(rig.scaling.inProgress().isEmpty());
        assertEquals(1, rig.scaling.history(rig.chain).size());
        assertEquals(after, rig.placement());
        assertEquals(rules, rig.switches.total());
    }

    @Test
    public void aRestartedAgentOfTheOtherServerGetsTheScaledOutGroupBackWithItsFlows() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("metron-scaleout-state");
        RealAgent[] agents = new RealAgent[2];
        int[] ports = new int[2];
        List<GrpcAgentClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                agents[i] = RealAgent.startOnPort("scaleout-restart" + i, 0, "--state-dir",
                        dir.resolve("agent" + i).toString(), "--state-checkpoint-ms", "100");
                ports[i] = portOf(agents[i]);
                clients.add(clientOf(ports[i]));
            }
            Rig rig = new Rig("scaleout-restart", clients.get(0), clients.get(1));
            Duration t = Duration.ofSeconds(10);
            AgentWatch watch = new AgentWatch(rig.servers, new ServerRecovery(rig.store, rig.manager, t), t);
            assertEquals("the first round compares both servers", Set.of(rig.home.id(), rig.away.id()),
                    watch.check());
            GroupAssignment moved = rig.sliceOut();
            rig.importFlow(rig.away, "g0.1", 5003, 3003); // a flow the other server made
            List<String> away = described(rig.groups(rig.away));
            List<String> home = described(rig.groups(rig.home));
            assertEquals(away.toString(), 1, away.size());
            Map<Integer, Integer> flows = rig.flows(rig.away, "g0.1");
            assertEquals(Map.of(5001, 2001, 5003, 3003), flows);
            Set<FlowRule> switchRules = new java.util.HashSet<>(rig.switches.rules(Fixtures.D1));
            switchRules.addAll(rig.switches.rules(Fixtures.D2));
            int awayIndex = rig.away.agent() == clients.get(0) ? 0 : 1;
            java.nio.file.Path stateDir = dir.resolve("agent" + awayIndex);
            // a checkpoint after the last import: the group's file is (re)written every 100 ms
            long deadline = System.currentTimeMillis() + 10_000;
            long since = System.currentTimeMillis();
            while (System.currentTimeMillis() < deadline && newestWrite(stateDir) <= since + 200) {
                Thread.sleep(50);
            }
            assertTrue(agents[awayIndex].log(), newestWrite(stateDir) > since + 200);

            agents[awayIndex].kill();
            assertTrue("the agent lost the group", watch.check().isEmpty());
            agents[awayIndex].close();
            agents[awayIndex] = RealAgent.startOnPort("scaleout-restart" + awayIndex + "b", ports[awayIndex],
                    "--state-dir", stateDir.toString(), "--state-checkpoint-ms", "100");
            Set<DeviceId> recovered = Set.of();
            deadline = System.currentTimeMillis() + 30_000;
            while (!recovered.contains(rig.away.id()) && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                recovered = watch.check();
            }
            assertEquals(agents[awayIndex].log(), Set.of(rig.away.id()), recovered);
            assertEquals(agents[awayIndex].log(), away, described(rig.groups(rig.away)));
            assertEquals("the flows of the last checkpoint\n" + agents[awayIndex].log(), flows,
                    rig.flows(rig.away, "g0.1"));
            assertEquals("the chain's server was not touched", home, described(rig.groups(rig.home)));
            Set<FlowRule> after = new java.util.HashSet<>(rig.switches.rules(Fixtures.D1));
            after.addAll(rig.switches.rules(Fixtures.D2));
            assertEquals("the switches still send the slice to the other server", switchRules, after);
            assertEquals(Set.of(), watch.check());

            ScalingEvent m = rig.executor().merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());
            assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
            assertEquals(Map.of(5000, 2000, 5001, 2001, 5003, 3003), rig.flows(rig.home, "g0"));
            rig.manager.remove(rig.chain);
            removeChains();
            rigs.remove(rig);
        } finally {
            for (GrpcAgentClient c : clients) {
                c.close();
            }
            for (RealAgent a : agents) {
                if (a != null) {
                    a.close();
                }
            }
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /**
     * The server a class slice was scaled out to is lost for good: its agent SIGKILLed and not started again. The
     * agent watch reports it lost (deadline 0 here) to {@link ChainManager#serverLost}, which hands it to scaling
     * ({@link ScalingManager} registered as the chain manager's {@code ServerLoss}, as both hosts do): the slice
     * comes back into g0 on the chain's server without a call to the dead agent — g0 holds the whole class again
     * (the agent lists it so), the offload rules are the original ones toward the chain's server, the transit and
     * return rules to the lost server are gone, its tag released; the flow made there is lost and the history
     * and the chain's reason say so, with the flows the group held in the last report of its server. The switch
     * refuses the first merge back: it rolls back and is tried again, and the second brings the slice back. When
     * that server's agent comes back later (empty), the recovery puts nothing of the chain there.
     */
    @Test
    public void aLostOtherServerGivesItsGroupBackToTheChainsServerWithoutItsFlows() throws Exception {
        RealAgent[] agents = new RealAgent[2];
        int[] ports = new int[2];
        List<GrpcAgentClient> clients = new ArrayList<>();
        ScalingManager scaler = null;
        try {
            for (int i = 0; i < 2; i++) {
                agents[i] = RealAgent.startOnPort("scaleout-lost" + i, 0);
                ports[i] = portOf(agents[i]);
                // a loaded machine's agent may take a while; the dead one's calls are not waited for (none made)
                clients.add(GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(ports[i])
                        .deadline(Duration.ofSeconds(15)).build()));
            }
            Rig rig = new Rig("scaleout-lost", clients.get(0), clients.get(1));
            Duration t = Duration.ofSeconds(10);
            scaler = new ScalingManager(rig.store, rig.factory, rig.servers, rig.crashing, rig.manager, Fixtures.APP,
                    t, ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS, rig.leadership,
                    System::currentTimeMillis, java.util.Optional.empty(), IngressWatch.INTERVAL_MS,
                    java.util.Optional.of(new RulePlanner(Fixtures.APP, rig.network)));
            rig.manager.onServerLost(scaler);
            AgentWatch watch = new AgentWatch(rig.servers, new ServerRecovery(rig.store, rig.manager, t), t).failover(Duration.ZERO, rig.manager::serverLost);
            assertEquals(Set.of(rig.home.id(), rig.away.id()), watch.check());
            GroupAssignment g0 = rig.group("g0");
            PortNumber homePort = rig.offloadRulesFor(g0.tag()).values().iterator().next();
            Set<Object> original = rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id)
                    .collect(Collectors.toSet());
            int rules = rig.switches.total();

            GroupAssignment moved = rig.sliceOut();
            rig.importFlow(rig.away, "g0.1", 5003, 3003); // a flow the other server made
            assertEquals(Map.of(5001, 2001, 5003, 3003), rig.flows(rig.away, "g0.1"));
            assertFalse(rig.s2Rules(rig.awayPort()).isEmpty());
            assertTrue(rig.switches.rules(Fixtures.D2).stream().anyMatch(r -> RuleRetagger.matchesGroup(r,
                    moved.tag())));
            // the last report of the other server (a real one) is what the history names
            scaler.monitor().onReport(rig.away.id(), rig.away.agent().getStats("").get(10, TimeUnit.SECONDS));
            int awayIndex = rig.away.agent() == clients.get(0) ? 0 : 1;
            agents[awayIndex].kill();
            // the switch refuses the first merge back's re-tag: rolled back, the slice still placed on the lost
            // server (its traffic lost); scaling tries again RETRY_FIRST_MS later, and that one brings it back
            rig.crashing.crashOn = Fixtures.D1;
            rig.crashing.failInstead = true;

            long lostAt = System.currentTimeMillis();
            assertEquals("the other server is lost (nothing to recover)", Set.of(), watch.check());
            long firstMs = System.currentTimeMillis() - lostAt;
            assertTrue("the refused merge back leaves the slice there", rig.placement().groups().stream()
                    .anyMatch(GroupAssignment::remote));
            List<ScalingEvent> first = rig.scaling.history(rig.chain);
            assertEquals(first.toString(), ScalingEvent.Outcome.ROLLED_BACK, first.get(first.size() - 1).outcome());
            long retryBy = System.currentTimeMillis() + ScalingManager.RETRY_FIRST_MS + 20_000;
            while (rig.placement().groups().stream().anyMatch(GroupAssignment::remote)
                    && System.currentTimeMillis() < retryBy) {
                Thread.sleep(50);
            }
            long tookMs = System.currentTimeMillis() - lostAt;

            assertTrue(rig.placement().toString(), rig.placement().groups().stream().noneMatch(GroupAssignment::remote));
            assertEquals(List.of("g0"), rig.placement().groups().stream().map(GroupAssignment::groupId)
                    .collect(Collectors.toList()));
            assertEquals(List.of(0, 1, 2, 3), rig.group("g0").classIds());
            assertTrue("class 0 whole again", rig.group("g0").slices().isEmpty());
            List<GroupStatus> home = rig.groups(rig.home);
            assertEquals(1, home.size());
            assertEquals(List.of(0, 1, 2, 3), home.get(0).getClassIdsList());
            Map<Integer, Integer> flows = rig.flows(rig.home, "g0");
            assertEquals("the flows made on the chain's server stay", Integer.valueOf(2000), flows.get(5000));
            assertFalse("the flow made on the lost server is gone with it", flows.containsKey(5003));
            // the original offload rules (the slice joined back), all toward the chain's server
            assertEquals(original, rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id)
                    .collect(Collectors.toSet()));
            assertTrue(rig.offloadRulesFor(moved.tag()).isEmpty());
            assertTrue(rig.offloadRulesFor(g0.tag()).values().stream().allMatch(homePort::equals));
            assertTrue("no return rule from the lost server", rig.s2Rules(rig.awayPort()).isEmpty());
            assertTrue(rig.switches.rules(Fixtures.D2).stream().noneMatch(r -> RuleRetagger.matchesGroup(r,
                    moved.tag())));
            assertEquals(rules, rig.switches.total());
            assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules()
                    .size());
            assertFalse(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
            assertTrue(rig.scaling.inProgress().isEmpty());
            List<ScalingEvent> history = rig.scaling.history(rig.chain);
            ScalingEvent e = history.stream().filter(x -> x.reason().contains("lost")
                    && x.outcome() == ScalingEvent.Outcome.DONE).findFirst().orElseThrow(
                    () -> new AssertionError(history.toString()));
            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            assertEquals(ScalingDecision.Kind.MERGE, e.kind());
            assertEquals(List.of("g0", "g0.1"), e.groups());
            assertTrue(e.reason(), e.reason().startsWith("server " + rig.away.id() + " lost: group g0.1"));
            assertTrue(e.reason(), e.reason().contains("flow state is lost with the server (2 flows at its last "
                    + "report"));
            assertTrue(e.steps(), e.steps().contains("the other server is lost"));
            assertTrue(rig.manager.chain(rig.chain).get().reason(), rig.manager.chain(rig.chain).get().reason()
                    .contains("server " + rig.away.id() + " lost"));
            assertEquals(ChainState.ACTIVE, rig.manager.chain(rig.chain).get().state());
            System.out.printf("lost server handled in %d ms: the first try refused after %d ms, the retry DONE "
                    + "(steps: %s)%n", tookMs, firstMs, e.steps());

            // its agent comes back, empty: nothing of the chain is placed there any more, so nothing is deployed
            agents[awayIndex].close();
            agents[awayIndex] = RealAgent.startOnPort("scaleout-lost" + awayIndex + "b", ports[awayIndex]);
            Set<DeviceId> recovered = Set.of();
            long deadline = System.currentTimeMillis() + 30_000;
            while (!recovered.contains(rig.away.id()) && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                recovered = watch.check();
            }
            assertEquals(Set.of(rig.away.id()), recovered);
            assertTrue("the merged-back group is not resurrected", rig.groups(rig.away).isEmpty());
            assertEquals(List.of(0, 1, 2, 3), rig.groups(rig.home).get(0).getClassIdsList());
            rig.manager.remove(rig.chain);
            removeChains();
            rigs.remove(rig);
        } finally {
            if (scaler != null) {
                scaler.close();
            }
            for (GrpcAgentClient c : clients) {
                c.close();
            }
            for (RealAgent a : agents) {
                if (a != null) {
                    a.close();
                }
            }
        }
    }

    /** The destination MAC a rule writes (a tag's class MAC for an offload or reply rule). */
    private static MacAddress destination(FlowRule r) {
        return r.treatment().allInstructions().stream().filter(i -> i instanceof ModEtherInstruction)
                .map(i -> ((ModEtherInstruction) i).mac()).findFirst().orElseThrow(() -> new AssertionError(r));
    }

    /** The port a rule outputs to. */
    private static PortNumber output(FlowRule r) {
        return r.treatment().allInstructions().stream().filter(i -> i instanceof Instructions.OutputInstruction)
                .map(i -> ((Instructions.OutputInstruction) i).port()).findFirst().orElseThrow(() ->
                        new AssertionError(r));
    }

    /** Whether a rule matches frames to exactly {@code mac} (a return rule matching a marker). */
    private static boolean matchesDestination(FlowRule r, MacAddress mac) {
        return r.selector().criteria().stream().anyMatch(c -> c.type() == Criterion.Type.ETH_DST
                && ((EthCriterion) c).mac().equals(mac));
    }

    /** Forward class c with reply class c + 5 answering it (the "answers" chain): 0, 3, 5, 8 stay, 1, 2, 6, 7 go. */
    private static final Map<Integer, Double> REPLY_RATES = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0,
            5, 500.0, 6, 300.0, 7, 200.0, 8, 10.0);

    /**
     * A chain with a reply ingress (NAPT whose replies come back through the egress point, here on s3, so the reply
     * rules sit on another device than the offload rules): a group scales out with the reply classes answering its
     * forward classes. The reply rules of those reply classes tag for the new group (same rule ids) and reach the
     * other server through a transit rule on s2 (the reply path s3 - s2 - server), the other server's restored
     * replies go back to the ingress point under the reply marker, and the flows go with the classes. Merging back
     * leaves every switch as it was before the scale-out: same rule ids, same actions.
     */
    @Test
    public void repliesOfAScaledOutGroupReachTheOtherServerAndReturnFromItAndMergeBackAsBefore() throws Exception {
        Rig rig = new Rig("answers-out", S3 + "/3");
        GroupAssignment g0 = rig.group("g0");
        Tag marker = g0.tag();
        Map<FlowId, TrafficTreatment> before = rig.allRules();
        Map<Integer, FlowRule> replies = rig.replyRules();
        assertEquals(Set.of(5, 6, 7, 8), replies.keySet());
        assertTrue("the reply rules sit on s3", replies.values().stream().allMatch(r -> r.deviceId().equals(D3)));
        rig.importFlow(rig.home, "g0", 5000, 2000);

        ScalingEvent e = rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.steps(), e.steps().contains("replies"));
        GroupAssignment moved = rig.group("g0.1");
        assertEquals(rig.away.id(), moved.server().get());
        assertEquals(List.of(1, 2, 6, 7), moved.classIds());
        assertEquals(List.of(0, 3, 5, 8), rig.group("g0").classIds());
        assertEquals(List.of(1, 2, 6, 7), rig.groups(rig.away).get(0).getClassIdsList());
        assertEquals("the flows went with the classes", Map.of(5000, 2000), rig.flows(rig.away, "g0.1"));
        Map<Integer, FlowRule> spread = rig.replyRules();
        assertEquals("the same reply rules, modified in place", replies.keySet().stream().map(c -> replies.get(c)
                .id()).collect(Collectors.toSet()), spread.values().stream().map(FlowRule::id)
                .collect(Collectors.toSet()));
        for (int c : List.of(6, 7)) {
            assertEquals(moved.tag().classMac(c), destination(spread.get(c)));
        }
        for (int c : List.of(5, 8)) {
            assertEquals(g0.tag().classMac(c), destination(spread.get(c)));
        }
        assertTrue("s3 has one way to the servers", spread.values().stream()
                .allMatch(r -> output(r).equals(PortNumber.portNumber(1))));
        // s2: the new tag from s3 (replies) and from s1 (forward) to the other server
        for (long in : new long[]{4, 1}) {
            List<FlowRule> transit = rig.s2Rules(PortNumber.portNumber(in)).stream()
                    .filter(r -> RuleRetagger.matchesGroup(r, moved.tag())).collect(Collectors.toList());
            assertEquals("from s2 port " + in, 1, transit.size());
            assertEquals(rig.awayPort(), output(transit.get(0)));
        }
        // from the other server: its output to the egress point (s3) and its restored replies to the ingress (s1)
        List<FlowRule> back = rig.s2Rules(rig.awayPort());
        assertEquals(back.toString(), 2, back.size());
        assertEquals(PortNumber.portNumber(4), output(back.stream().filter(r -> matchesDestination(r,
                marker.egressMac())).findFirst().orElseThrow()));
        assertEquals(PortNumber.portNumber(1), output(back.stream().filter(r -> matchesDestination(r,
                marker.replyEgressMac())).findFirst().orElseThrow()));
        assertTrue("s1 already carries replies from s2 to the ingress point", rig.switches.rules(Fixtures.D1)
                .stream().anyMatch(r -> matchesDestination(r, marker.replyEgressMac())));
        assertEquals(2, rig.offloadRulesFor(moved.tag()).size());
        rig.assertStoreTruthful();

        // a flow the other server made comes back with the merge
        rig.importFlow(rig.away, "g0.1", 5002, 3002);
        ScalingEvent m = rig.executor().merge(rig.chain, "g0.1", "g0", "test", System.currentTimeMillis());

        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertTrue(m.steps(), m.steps().contains("replies"));
        assertEquals(List.of(0, 1, 2, 3, 5, 6, 7, 8), rig.group("g0").classIds());
        assertEquals(Map.of(5000, 2000, 5002, 3002), rig.flows(rig.home, "g0"));
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals("every switch as before the scale-out", before, rig.allRules());
        rig.assertStoreTruthful();
        assertFalse(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
    }

    /**
     * The reply batch on s3 is refused after the forward batch moved traffic: the scale-out is done and says so; the
     * reply rules still send the moved reply classes to the chain's server (whose group still holds the flows made
     * before), and the store says what the switch holds. The merge back then finds every switch as before.
     */
    @Test
    public void aRefusedReplyBatchLeavesTheScaleOutDoneAndTheStoreTruthful() throws Exception {
        Rig rig = new Rig("answers-out-refused", S3 + "/3");
        Map<FlowId, TrafficTreatment> before = rig.allRules();
        Map<Integer, FlowRule> replies = rig.replyRules();
        rig.crashing.crashOn = D3;
        rig.crashing.failInstead = true;

        ScalingEvent e = rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.detail(), e.detail().contains("reply rules of classes [1, 2, 6, 7] still tag them for g0")
                && e.detail().contains("refused"));
        GroupAssignment moved = rig.group("g0.1");
        assertTrue(moved.remote());
        assertEquals(2, rig.offloadRulesFor(moved.tag()).size());
        Map<Integer, FlowRule> now = rig.replyRules();
        replies.forEach((c, r) -> assertEquals(destination(r), destination(now.get(c))));
        rig.assertStoreTruthful();

        ScalingEvent m = rig.executor().merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());
        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals(before, rig.allRules());
        rig.assertStoreTruthful();
    }

    /**
     * The controller stops between the forward batch and the reply batch (journal at SWITCHED): on restart the
     * recovery re-tags forward (again) and the replies toward the other server, syncs and commits.
     */
    @Test
    public void aControllerThatStoppedBeforeTheReplyBatchSendsTheRepliesToTheOtherServerOnRestart()
            throws Exception {
        Rig rig = new Rig("answers-out-crash", S3 + "/3");
        Tag original = rig.group("g0").tag();
        rig.importFlow(rig.home, "g0", 5000, 2000);
        rig.crashing.crashOn = D3;
        try {
            rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());
            fail("the controller should have crashed");
        } catch (IllegalStateException expected) {
            // the journal holds the operation at SWITCHED
        }
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());
        Tag moved = rig.group("g0.1").tag();
        assertEquals("forward re-tagged", 2, rig.offloadRulesFor(moved).size());
        rig.replyRules().forEach((c, r) -> assertEquals("replies not yet", original.classMac(c), destination(r)));

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(1, recovered.size());
        assertEquals(recovered.get(0).detail(), ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        Map<Integer, FlowRule> replies = rig.replyRules();
        for (int c : List.of(5, 6, 7, 8)) {
            assertEquals("class " + c, (c == 6 || c == 7 ? moved : original).classMac(c), destination(replies.get(c)));
        }
        assertEquals(Map.of(5000, 2000), rig.flows(rig.away, "g0.1"));
        assertTrue(rig.scaling.inProgress().isEmpty());
        rig.assertStoreTruthful();
    }

    /**
     * The server a reply-answered group was scaled out to is lost ({@link ScalingExecutor#serverLost}, called here
     * directly while its agent still runs: the detection is aLostOtherServerGivesItsGroupBackToTheChainsServer's;
     * nothing is asked of the agent either way): the group comes back into g0, the reply rules tag for g0 toward
     * the chain's server again (same ids) and the reply path to the lost server goes with the rest of its path —
     * every switch as before the scale-out.
     */
    @Test
    public void aLostOtherServerGivesTheRepliesOfItsGroupBackToTheChainsServer() throws Exception {
        Rig rig = new Rig("answers-out-lost", S3 + "/3");
        Map<FlowId, TrafficTreatment> before = rig.allRules();
        ScalingEvent e = rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertNotEquals(before, rig.allRules());

        List<ScalingEvent> back = rig.executor().serverLost(rig.chain, rig.away.id(),
                g -> java.util.OptionalLong.empty());

        assertEquals(1, back.size());
        assertEquals(back.get(0).detail(), ScalingEvent.Outcome.DONE, back.get(0).outcome());
        assertEquals(List.of("g0"), rig.placement().groups().stream().map(GroupAssignment::groupId)
                .collect(Collectors.toList()));
        assertEquals(List.of(0, 1, 2, 3, 5, 6, 7, 8), rig.groups(rig.home).get(0).getClassIdsList());
        assertEquals("every switch as before the scale-out", before, rig.allRules());
        rig.assertStoreTruthful();
        // the stand-in for a lost server still runs the group: gone with the server in the real case
        rig.away.agent().removePipeline(rig.chain.name()).get(10, TimeUnit.SECONDS);
    }

    /** When a file in {@code dir} was last written (0 when none). */
    private static long newestWrite(java.nio.file.Path dir) throws Exception {
        if (!java.nio.file.Files.isDirectory(dir)) {
            return 0;
        }
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(dir)) {
            return files.mapToLong(f -> f.toFile().lastModified()).max().orElse(0);
        }
    }
}
