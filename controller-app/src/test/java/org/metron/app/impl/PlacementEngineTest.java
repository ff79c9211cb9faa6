package org.metron.app.impl;

import org.metron.app.api.Deployments;

import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.Tag;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.synth.TagType;
import org.metron.app.spi.DeviceRole;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.synth.ChainSpec;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.onosproject.net.ConnectPoint;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Power of two random choices and the offload device choice. */
public class PlacementEngineTest {
    private static final ChainId C = ChainId.of("c");
    private static final ConnectPoint IN = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1");
    private static final ConnectPoint OUT = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3");

    private final TestSwitches switches = new TestSwitches();
    private final List<TestAgent> agents = new ArrayList<>();

    private PlacementEngine engine(TestNetwork net, long seed, double... loads) {
        TestServers servers = new TestServers();
        for (int i = 0; i < loads.length; i++) {
            TestAgent a = new TestAgent("agent" + i + ":1", 4, loads[i]).nic("eth0", true, 64).nic("eth1", true, 64);
            agents.add(a);
            servers.add(Fixtures.server(i, a));
        }
        return new PlacementEngine(servers, net, switches, new Random(seed), Duration.ofSeconds(1));
    }

    /** A group of a pipeline that keeps {@code core} busy. */
    private static GroupSpec busy(String id, int core) {
        return GroupSpec.newBuilder().setGroupId(id).setClickConfig("input -> [0]output;").setCore(core)
                .setTag(Tag.newBuilder().setType(org.metron.agent.v1.TagType.TAG_MAC).setValue(core + 1))
                .addClassIds(core).build();
    }

    private static Deployment spec(int cores, int nics) {
        return Deployments.of(TagType.MAC, cores, Math.max(cores, 4), false, IN, OUT, nics);
    }

    @Test
    public void picksTheLessLoadedOfTwoAndAsksOnlyTwo() {
        for (long seed = 0; seed < 20; seed++) {
            agents.clear();
            PlacementEngine e = engine(Fixtures.network(8), seed, 0.8, 0.1, 0.5, 0.3, 0.9, 0.2, 0.7, 0.4);
            ServerChoice c = e.chooseServer(C, spec(1, 1), 1, d -> Set.of());
            assertEquals(2, c.queried());
            List<Integer> asked = new ArrayList<>();
            for (int i = 0; i < agents.size(); i++) {
                if (agents.get(i).resourceQueries() > 0) {
                    asked.add(i);
                }
            }
            assertEquals(2, asked.size());
            double expected = Math.min(load(asked.get(0)), load(asked.get(1)));
            assertEquals("seed " + seed, expected, c.load(), 1e-9);
        }
    }

    private static double load(int i) {
        return new double[]{0.8, 0.1, 0.5, 0.3, 0.9, 0.2, 0.7, 0.4}[i];
    }

    @Test
    public void discardsBothAndDrawsAgainWhenNeitherFits() {
        PlacementEngine e = engine(Fixtures.network(6), 3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9);
        // only the most loaded server has 3 free cores: the others each run a pipeline on cores 0 and 1
        for (int i = 0; i < 5; i++) {
            assertEquals("x", agents.get(i).deployPipeline(DeployPipelineRequest.newBuilder().setPipelineId("x")
                    .setIngressNic("eth0").addGroups(busy("g0", 0)).addGroups(busy("g1", 1)).build()).join()
                    .getPipelineId());
        }
        ServerChoice c = e.chooseServer(C, spec(3, 1), 3, d -> Set.of());
        assertEquals(Fixtures.serverId(5), c.server().id().toString());
        assertEquals(List.of(0, 1, 2), c.cores());
        assertTrue("asked at least the winner and one loser", c.queried() >= 2);
        assertTrue("no server asked twice", agents.stream().allMatch(a -> a.resourceQueries() <= 1));
    }

    @Test
    public void honoursReservedCoresAndNicRequirements() {
        PlacementEngine e = engine(Fixtures.network(2), 1, 0.1, 0.5);
        // server0's free cores are all promised to chains not yet deployed
        ServerChoice c = e.chooseServer(C, spec(2, 1), 2,
                d -> d.toString().equals(Fixtures.serverId(0)) ? Set.of(0, 1, 2) : Set.of());
        assertEquals(Fixtures.serverId(1), c.server().id().toString());

        agents.get(1).nic("eth2", false, 0);
        MetronException ex = assertThrows(MetronException.class,
                () -> e.chooseServer(C, spec(1, 3), 1, d -> Set.of()));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, ex.fault());
        assertTrue(ex.getMessage(), ex.getMessage().contains("2 usable NICs"));
    }

    /**
     * A chain with VLAN tags is not placed on a server whose ingress NIC dispatches with VMDq MAC pools (what the
     * agent reports for --vmdq: MAC tags only); where no server can, the refusal names server, NIC, mode and the
     * missing tag type. The same servers take a MAC-tagged chain.
     */
    @Test
    public void vlanChainsGoOnlyWhereTheIngressNicDispatchesVlanTags() {
        TestServers servers = new TestServers();
        TestAgent pools = new TestAgent("pools:1", 4, 0.0)
                .nic("eth0", true, 0, DispatchMode.DISPATCH_VMDQ, org.metron.agent.v1.TagType.TAG_MAC)
                .nic("eth1", true, 0, DispatchMode.DISPATCH_VMDQ, org.metron.agent.v1.TagType.TAG_MAC);
        TestAgent fanout = new TestAgent("fanout:1", 4, 0.9).nic("eth0", true, 0).nic("eth1", true, 0);
        servers.add(Fixtures.server(0, pools));
        servers.add(Fixtures.server(1, fanout));
        PlacementEngine e = new PlacementEngine(servers, Fixtures.network(2), switches, new Random(1),
                Duration.ofSeconds(1));
        Deployment vlan = Deployments.of(TagType.VLAN, 1, 4, false, IN, OUT, 1);
        for (int i = 0; i < 10; i++) {
            assertEquals("the less loaded server cannot dispatch VLAN tags", Fixtures.serverId(1),
                    e.chooseServer(C, vlan, 1, d -> Set.of()).server().id().toString());
        }
        assertEquals("MAC tags: the less loaded one", Fixtures.serverId(0),
                e.chooseServer(C, spec(1, 1), 1, d -> Set.of()).server().id().toString());

        TestServers onlyPools = new TestServers();
        onlyPools.add(Fixtures.server(0, pools));
        MetronException ex = assertThrows(MetronException.class, () -> new PlacementEngine(onlyPools,
                Fixtures.network(1), switches, new Random(1), Duration.ofSeconds(1))
                .chooseServer(C, vlan, 1, d -> Set.of()));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, ex.fault());
        assertTrue(ex.getMessage(), ex.getMessage().contains(Fixtures.serverId(0) + ": 2 usable NICs, none of those "
                + "reachable from " + IN + " can dispatch vlan tags: NIC eth0 dispatches with vmdq, which steers "
                + "mac tags only (no vlan tag dispatch)"));
        assertTrue(ex.getMessage(), ex.getMessage().contains("dispatching vlan tags; no server fits"));
    }

    /** A chain whose NAPT declares MAPPING_CAPACITY 1,000,000, synthesized for software classification. */
    private static FlowStateDemand declaredMillion() {
        String json = "{\"name\": \"napt\", \"nfs\": [{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14)"
                + " -> CheckIPHeader -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop, MAPPING_CAPACITY"
                + " 1000000) -> Unstrip(14) -> ToDevice(out0);\"}], \"links\": [], \"ingress\": [\"napt.in0\"],"
                + " \"egress\": [\"napt.out0\"]}";
        return FlowStateDemand.of(Synthesizer.compile(ChainSpec.fromJson(json), TargetProfile.NONE));
    }

    @Test
    public void aServerMustHoldTheFlowStateTheChainDeclares() {
        FlowStateDemand million = declaredMillion();
        assertFalse(million.isEmpty());
        PlacementEngine e = engine(Fixtures.network(2), 1, 0.1, 0.9);
        agents.get(0).flowMemory(100L << 20, 245);  // 100 MB: less than 1M flows x 245 B
        agents.get(1).flowMemory(1L << 30, 245);
        // server0 is less loaded, but only server1 holds a million declared flows
        assertEquals(Fixtures.serverId(1), e.chooseServer(C, spec(1, 1), 1, d -> Set.of(), million).server().id()
                .toString());
        assertEquals(Fixtures.serverId(0), e.chooseServer(C, spec(1, 1), 1, d -> Set.of(), FlowStateDemand.none())
                .server().id().toString());

        agents.get(1).flowMemory(200L << 20, 245);
        MetronException ex = assertThrows(MetronException.class,
                () -> e.chooseServer(C, spec(1, 1), 1, d -> Set.of(), million));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, ex.fault());
        assertTrue(ex.getMessage(), ex.getMessage().contains("the flow memory of its declared capacities"));
        assertTrue(ex.getMessage(), ex.getMessage().contains(Fixtures.serverId(1) + ": flow state: group 0's rw_1 "
                + "(SynthRewriter) declares CAPACITY 1000000, 233.7 MB of flow memory in all; the agent has 200.0 MB "
                + "free"));
        assertTrue(ex.getMessage(), ex.getMessage().contains("the agent has 100.0 MB free"));
    }

    @Test
    public void twoNicsSplitIngressAndEgress() {
        PlacementEngine e = engine(Fixtures.network(1), 1, 0.1);
        ServerChoice c = e.chooseServer(C, spec(1, 2), 1, d -> Set.of());
        assertEquals("eth0", c.nic());
        assertEquals("eth1", c.egressNic());
        ServerChoice one = e.chooseServer(C, spec(1, 1), 1, d -> Set.of());
        assertEquals("eth0", one.egressNic());
    }

    @Test
    public void offloadsOnTheFirstProgrammableDeviceThatFits() {
        PlacementEngine e = engine(Fixtures.network(1), 1, 0.1);
        ConnectPoint at = ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10");
        OffloadChoice o = e.chooseOffload(C, IN, at, p -> Fixtures.compiled("c", p));
        assertEquals(Fixtures.D1, o.device());
        assertEquals("OPENFLOW13", o.profile().name());
        assertEquals(0, o.position());
        assertEquals(List.of(Fixtures.D2), o.backups());

        // s1 is nearly full: 4 rules don't fit in 2, s2 takes them
        switches.otherRules(Fixtures.D1, 998);
        o = e.chooseOffload(C, IN, at, p -> Fixtures.compiled("c", p));
        assertEquals(Fixtures.D2, o.device());
        assertEquals(1, o.position());
        assertEquals("s1 cannot hold the rules: no backup", List.of(), o.backups());
    }

    @Test
    public void fallsBackToSoftwareClassificationWhenNoDeviceHoldsTheRules() {
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OPENFLOW_SWITCH, 2)
                .device(Fixtures.S2, DeviceRole.OTHER, 0).cable(Fixtures.S1, 2, Fixtures.S2, 1);
        PlacementEngine e = engine(net, 1, 0.1);
        OffloadChoice o = e.chooseOffload(C, IN, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"),
                p -> Fixtures.compiled("c", p));
        assertEquals(Fixtures.D1, o.device());
        assertEquals(TargetProfile.NONE.name(), o.profile().name());
        assertTrue(o.compiled().offloadRules().isEmpty());
    }

    @Test
    public void noProgrammableDeviceOrNoPathIsImpossible() {
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OTHER, 0)
                .device(Fixtures.S2, DeviceRole.OTHER, 0).cable(Fixtures.S1, 2, Fixtures.S2, 1);
        PlacementEngine e = engine(net, 1, 0.1);
        MetronException ex = assertThrows(MetronException.class, () -> e.chooseOffload(C, IN,
                ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"), p -> Fixtures.compiled("c", p)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, ex.fault());
        assertTrue(ex.getMessage(), ex.getMessage().contains("no programmable device"));

        MetronException np = assertThrows(MetronException.class, () -> e.chooseOffload(C, IN,
                ConnectPoint.deviceConnectPoint("of:00000000000000ff/1"), p -> Fixtures.compiled("c", p)));
        assertTrue(np.getMessage(), np.getMessage().contains("no path"));
    }
}
