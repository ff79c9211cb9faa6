package org.metron.app.scaling;

import org.junit.After;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.NaptFlows;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.drivers.agent.AgentClient;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * What the scale-out tests stand on: two real metron-agents, one per server (real gRPC, DeployPipeline/
 * UpdatePipeline, ExportState/ImportState), started once per test class, the ONOS-style switch stand-in, and a
 * {@link Rig} per chain, which may use one core on its server ({@code maxCpuCores: 1}) so that its split goes to
 * the other server. After each test every chain is removed and neither server nor any switch may hold anything
 * of it.
 */
public abstract class ScaleOutFixture {
    /** A third switch, behind s2 (s2 port 4 - s3 port 1): an egress point there puts the reply rules on it. */
    static final String S3 = "of:0000000000000003";
    static final DeviceId D3 = DeviceId.deviceId(S3);
    static RealAgent first;
    static RealAgent second;

    final List<Rig> rigs = new ArrayList<>();

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

    /** One chain of four UDP classes (ScalingChains#compiled) on one of two servers, one core at most. */
    final class Rig extends ChainRig {
        final TestServers servers = new TestServers();
        /** Shared by the chain manager and a test's scaling manager, as the hosts share theirs (its term fences). */
        final SingleInstanceLeadership leadership = new SingleInstanceLeadership();
        final ChainManager manager;
        final MetronServer home;
        final MetronServer away;

        final Synthesis synthesis = (spec, profile) -> ScalingChains.compiled(spec.name(), profile);
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

        /** On the servers of two given agents' clients (server a and server b; b null: server a alone). */
        Rig(String name, AgentClient a, AgentClient b, String egressPoint) throws Exception {
            this(name, a, b, egressPoint, false);
        }

        /** ... with {@code autoScale} set in the chain's deployment (the load monitor's policy acts on it). */
        Rig(String name, AgentClient a, AgentClient b, String egressPoint, boolean autoScale) throws Exception {
            super(name);
            servers.add(new MetronServer(DeviceId.deviceId("metron:a"), a, Map.of(nicOf(a),
                    ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
            if (b != null) {
                servers.add(new MetronServer(DeviceId.deviceId("metron:b"), b, Map.of(nicOf(b),
                        ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/11"))));
            }
            Duration t = Duration.ofSeconds(10);
            manager = new ChainManager(store, servers, switches, leadership,
                    new PlacementEngine(servers, network, switches, new Random(1), t),
                    new RulePlanner(Fixtures.APP, network), new Deployer(switches, t), t, synthesis);
            String json = Fixtures.chainJson(name, "mac", 1, 1).replace("\"maxCpuCores\": 4", "\"maxCpuCores\": 1")
                    .replace("\"egressPoint\": \"" + Fixtures.S1 + "/3\"", "\"egressPoint\": \"" + egressPoint + "\"");
            if (autoScale) {
                json = json.replace("\"nics\": 1}", "\"nics\": 1, \"autoScale\": true}");
            }
            assertTrue(json, json.contains("\"maxCpuCores\": 1") && json.contains(egressPoint)
                    && json.contains("autoScale") == autoScale);
            assertEquals(ChainState.ACTIVE, manager.submit(json).state());
            DeviceId on = placement().server().get();
            home = servers.server(on).get();
            away = servers.servers().stream().filter(s -> !s.id().equals(on)).findFirst().orElse(null);
            rigs.add(this);
        }

        ScalingExecutor executor() {
            return executor(System::currentTimeMillis);
        }

        /** An executor reading time from {@code clock} (its resource cache's age too). */
        ScalingExecutor executor(java.util.function.LongSupplier clock) {
            return new ScalingExecutor(store, scaling, servers, crashing, manager, manager, Fixtures.APP,
                    Duration.ofSeconds(10), clock, new RulePlanner(Fixtures.APP, network), new Random(1), leadership);
        }

        /** S2's port toward the other server: which of the two is the chain's server is the placement's choice. */
        PortNumber awayPort() {
            return away.attachments().values().iterator().next().port();
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

        /** The chain's groups on a server's agent; none on no server (a rig of one server has no other). */
        List<GroupStatus> groups(MetronServer s) throws Exception {
            if (s == null) {
                return List.of();
            }
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

    /** A test on a rig over two agents of one worker core each: the rig's servers a and b, in that order. */
    interface OneCoreTest {
        void run(Rig rig, RealAgent a, RealAgent b) throws Exception;
    }

    /**
     * Runs {@code test} on a rig of chain {@code name} over two agents of one worker core each, as each server of the
     * fast network's two-servers topology has (a split there has no second core: it scales out), started for it and
     * closed after. The chain is removed after; while both agents still run nothing of it may be left
     * ({@link #removeChain}).
     */
    void onOneCoreServers(String name, OneCoreTest test) throws Exception {
        RealAgent a = RealAgent.startWorkers(name + "-a", 1);
        RealAgent b = RealAgent.startWorkers(name + "-b", 1);
        Rig rig = null;
        try {
            rig = new Rig(name, a.client(), b.client());
            test.run(rig, a, b);
        } finally {
            if (rig != null) {
                rigs.remove(rig);
                if (a.alive() && b.alive()) {
                    removeChain(rig);
                } else {
                    rig.manager.remove(rig.chain); // what the dead agent held went with it
                }
            }
            a.close();
            b.close();
        }
    }

    @After
    public void removeChains() throws Exception {
        for (Rig r : rigs) {
            removeChain(r);
        }
    }

    /** Removes the rig's chain; nothing of it may be left on either server or any switch. */
    static void removeChain(Rig r) throws Exception {
        if (r.manager.chain(r.chain).isPresent()) {
            r.manager.remove(r.chain);
        }
        assertTrue(r.groups(r.home).isEmpty());
        assertTrue("nothing of the chain is left on the other server", r.groups(r.away).isEmpty());
        assertEquals("every rule the chain ever installed is gone", 0, r.switches.total());
    }

    static int portOf(RealAgent a) {
        String target = a.client().target();
        return Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
    }

    /** The destination MAC a rule writes (a tag's class MAC for an offload or reply rule). */
    static MacAddress destination(FlowRule r) {
        return r.treatment().allInstructions().stream().filter(i -> i instanceof ModEtherInstruction)
                .map(i -> ((ModEtherInstruction) i).mac()).findFirst().orElseThrow(() -> new AssertionError(r));
    }

    /** The port a rule outputs to. */
    static PortNumber output(FlowRule r) {
        return r.treatment().allInstructions().stream().filter(i -> i instanceof Instructions.OutputInstruction)
                .map(i -> ((Instructions.OutputInstruction) i).port()).findFirst().orElseThrow(() ->
                        new AssertionError(r));
    }
}
