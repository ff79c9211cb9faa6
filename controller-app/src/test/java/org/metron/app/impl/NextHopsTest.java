package org.metron.app.impl;

import org.metron.app.api.Deployments;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.MetronSerializers;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.synth.CompiledChain;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * The last hop toward either end of a chain addresses frames to the host there (docs/contracts.md#egress):
 * the chain's egressMac/replyMac, else the one host the network knows at the point, else the marker stays.
 * Fixture network: s1:2 - s2:1, server eth0 at s2:10, eth1 at s2:20; ingress s1:1, egress s1:3.
 */
public class NextHopsTest {
    private static final ChainId C = ChainId.of("c");
    private static final ConnectPoint IN = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1");
    private static final ConnectPoint OUT = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3");
    private static final MacAddress SRC = MacAddress.valueOf("02:00:00:00:00:01");
    private static final MacAddress SINK = MacAddress.valueOf("02:00:00:00:00:02");
    private static final MacAddress ROUTER = MacAddress.valueOf("02:00:00:00:00:99");
    private static final MacAddress FWD = Tag.of(TagType.MAC, 7).egressMac();
    private static final MacAddress BACK = Tag.of(TagType.MAC, 7).replyEgressMac();
    private final TestNetwork net = Fixtures.network(1);
    private final MetronServer server = Fixtures.server(0, new TestAgent("a:1", 4, 0));

    private DeploymentPlan plan(TagType type, Deployment d) {
        CompiledChain compiled = ReplyRulesTest.naptWithReplies(ReplyRulesTest.replyRules(),
                List.of("napt.out0", "fw.out1"));
        List<GroupAssignment> groups = List.of(new GroupAssignment("g0", Tag.of(type, 7), 0,
                compiled.groups().get(0).classIds()));
        Placement p = new Placement(C, Optional.of(server.id()), "eth0", "eth1", Optional.of(Fixtures.D1),
                "OPENFLOW13", groups);
        OffloadChoice o = new OffloadChoice(Fixtures.D1, compiled.target(), compiled,
                net.path(ingress(d), server.attachment("eth0").get()).get(), 0, List.of(), List.of());
        return new RulePlanner(Fixtures.APP, net).plan(C, d, p, Optional.of(server), true, o, groups.get(0).tag());
    }

    private static Deployment spec(TagType type, MacAddress egressMac, MacAddress replyMac) {
        return Deployments.of(type, 1, 1, false, IN, OUT, 2, egressMac, replyMac);
    }

    private static List<Instruction> instr(FlowRule r) {
        return r.treatment().allInstructions();
    }

    private static FlowRule returnFrom(DeploymentPlan p, DeviceId d, int port, MacAddress marker) {
        List<FlowRule> found = p.switchRules().get(d).stream().filter(r -> r.role() == Role.RETURN)
                .map(InstalledRule::rule)
                .filter(r -> ((PortCriterion) r.selector().getCriterion(Criterion.Type.IN_PORT)).port().toLong() == port
                        && ((EthCriterion) r.selector().getCriterion(Criterion.Type.ETH_DST)).mac().equals(marker))
                .collect(Collectors.toList());
        assertEquals(p.switchRules().toString(), 1, found.size());
        return found.get(0);
    }

    @Test
    public void theLastHopWritesTheHostsTheNetworkKnowsAndTransitHopsKeepTheMarker() {
        net.host(IN.toString(), SRC.toString()).host(OUT.toString(), SINK.toString());
        DeploymentPlan p = plan(TagType.MAC, spec(TagType.MAC, null, null));
        // forward: eth1 (s2:20) -> s2:1 -> s1:2 -> s1:3 (the sink); replies: eth0 (s2:10) -> s1:2 -> s1:1 (the source)
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(1))), instr(returnFrom(p, Fixtures.D2, 20, FWD)));
        assertEquals(List.of(Instructions.modL2Dst(SINK), Instructions.createOutput(OUT.port())),
                instr(returnFrom(p, Fixtures.D1, 2, FWD)));
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(1))), instr(returnFrom(p, Fixtures.D2, 10, BACK)));
        assertEquals(List.of(Instructions.modL2Dst(SRC), Instructions.createOutput(IN.port())),
                instr(returnFrom(p, Fixtures.D1, 2, BACK)));
        // the agent still writes the markers: the return rules forward on them
        assertEquals(FWD.toString().toLowerCase(), p.pipeline().getEgress(0).getDstMac());
        assertEquals(BACK.toString().toLowerCase(), p.pipeline().getEgress(1).getDstMac());
    }

    @Test
    public void theChainsOwnMacsWinOverTheHostsTheNetworkKnows() {
        net.host(IN.toString(), SRC.toString()).host(OUT.toString(), SINK.toString());
        DeploymentPlan p = plan(TagType.MAC, spec(TagType.MAC, ROUTER, MacAddress.valueOf("02:00:00:00:00:98")));
        assertEquals(List.of(Instructions.modL2Dst(ROUTER), Instructions.createOutput(OUT.port())),
                instr(returnFrom(p, Fixtures.D1, 2, FWD)));
        assertEquals(List.of(Instructions.modL2Dst(MacAddress.valueOf("02:00:00:00:00:98")),
                Instructions.createOutput(IN.port())), instr(returnFrom(p, Fixtures.D1, 2, BACK)));
    }

    @Test
    public void withoutAnyKnownHostTheMarkerStays() {
        DeploymentPlan p = plan(TagType.MAC, spec(TagType.MAC, null, null));
        assertEquals(List.of(Instructions.createOutput(OUT.port())), instr(returnFrom(p, Fixtures.D1, 2, FWD)));
        assertEquals(List.of(Instructions.createOutput(IN.port())), instr(returnFrom(p, Fixtures.D1, 2, BACK)));
    }

    @Test
    public void vlanMarkersArePoppedBeforeTheHostsMacIsWritten() {
        DeploymentPlan p = plan(TagType.VLAN, spec(TagType.VLAN, SINK, SRC));
        MacAddress fwd = Tag.of(TagType.VLAN, 7).egressMac();
        MacAddress back = Tag.of(TagType.VLAN, 7).replyEgressMac();
        assertEquals(List.of(Instructions.popVlan(), Instructions.modL2Dst(SINK), Instructions.createOutput(OUT.port())),
                instr(returnFrom(p, Fixtures.D1, 2, fwd)));
        assertEquals(List.of(Instructions.popVlan(), Instructions.modL2Dst(SRC), Instructions.createOutput(IN.port())),
                instr(returnFrom(p, Fixtures.D1, 2, back)));
    }

    @Test
    public void severalHostsAtAPointAndNoMacNamedIsRefusedNamingThem() {
        net.host(OUT.toString(), SINK.toString()).host(OUT.toString(), ROUTER.toString());
        MetronException e = assertThrows(MetronException.class, () -> plan(TagType.MAC, spec(TagType.MAC, null, null)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertEquals("chain c: hosts [02:00:00:00:00:02, 02:00:00:00:00:99] are all attached at its egressPoint "
                + OUT + "; name the one its traffic is for in deployment.egressMac", e.getMessage());
        // naming one settles it
        plan(TagType.MAC, spec(TagType.MAC, ROUTER, null));
    }

    @Test
    public void aRuleOutputtingStraightToTheEgressPortWritesTheHostsMacItself() {
        // no server: forward UDP leaves s1 at s1:3 and UDP replies (from port 53) enter there and leave at s1:1,
        // each by the one rule that classifies it
        net.host(IN.toString(), SRC.toString()).host(OUT.toString(), SINK.toString());
        CompiledChain c = Fixtures.switchOnlyUdpWithReplies();
        Placement p = new Placement(C, Optional.empty(), "", "", Optional.of(Fixtures.D1), "OPENFLOW13", List.of());
        OffloadChoice o = new OffloadChoice(Fixtures.D1, c.target(), c, List.of(), 0, List.of(), List.of());
        DeploymentPlan plan = new RulePlanner(Fixtures.APP, net).plan(C, spec(TagType.VLAN, null, null), p,
                Optional.empty(), false, o, Tag.of(TagType.VLAN, 9));

        List<FlowRule> s1 = plan.switchRules().get(Fixtures.D1).stream().map(InstalledRule::rule)
                .collect(Collectors.toList());
        // no marker and no VLAN: no rule after these one would forward on them
        assertTrue(s1.stream().anyMatch(r -> instr(r).equals(List.of(Instructions.modL2Dst(SINK),
                Instructions.createOutput(OUT.port())))));
        assertTrue(s1.stream().anyMatch(r -> instr(r).equals(List.of(Instructions.modL2Dst(SRC),
                Instructions.createOutput(IN.port())))));
        assertTrue(plan.switchRules().get(Fixtures.D1).stream().noneMatch(r -> r.role() == Role.RETURN));
    }

    @Test
    public void theChainJsonCarriesTheMacsToTheSwitches() {
        World w = new World(1, (spec, profile) -> ReplyRulesTest.naptWithReplies(ReplyRulesTest.replyRules(),
                List.of("fw.out0", "fw.out1")), 3);
        String json = Fixtures.chainJson("m").replace("\"ingress\": [\"fw.in0\"]", "\"ingress\": [\"fw.in0\", \"fw.in1\"]")
                .replace("\"egress\": [\"fw.out0\"]", "\"egress\": [\"fw.out0\", \"fw.out1\"]")
                .replace("-> ToDevice(out0);", "-> ToDevice(out0); FromDevice(in1) -> ToDevice(out1);");
        assertEquals(ChainState.ACTIVE, w.manager.submit(json.replace("\"nics\": 1", "\"nics\": 1, \"egressMac\": "
                + "\"02:00:00:00:00:02\", \"replyMac\": \"02:00:00:00:00:01\"")).state());
        // stored with the chain (what a restarted controller plans with)
        Deployment stored = w.store.chains().get(ChainId.of("m")).get().value().deployment();
        assertEquals(Optional.of(SINK), Deployments.egressMac(stored));
        assertEquals(Optional.of(SRC), Deployments.replyMac(stored));
        assertEquals(stored, MetronSerializers.NAMESPACE.deserialize(MetronSerializers.NAMESPACE.serialize(stored)));
        List<FlowRule> s1 = new ArrayList<>(w.switches.rules(Fixtures.D1));
        assertTrue(s1.stream().anyMatch(r -> instr(r).equals(List.of(Instructions.modL2Dst(SINK),
                Instructions.createOutput(OUT.port())))));
        assertTrue(s1.stream().anyMatch(r -> instr(r).equals(List.of(Instructions.modL2Dst(SRC),
                Instructions.createOutput(IN.port())))));

        // a MAC that is not one is refused naming the field, and nothing is installed
        int before = w.switches.total();
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(json.replace("\"name\": \"m\"",
                "\"name\": \"n\"").replace("\"nics\": 1", "\"nics\": 1, \"egressMac\": \"02:00:00:00:02\"")));
        assertEquals(Fault.INVALID_CHAIN, e.fault());
        assertEquals("deployment.egressMac '02:00:00:00:02' is not a MAC address (six hex bytes, e.g. "
                + "\"02:00:00:00:00:02\")", e.getMessage());
        MetronException multicast = assertThrows(MetronException.class, () -> w.manager.submit(json.replace(
                "\"name\": \"m\"", "\"name\": \"n\"").replace("\"nics\": 1", "\"nics\": 1, \"replyMac\": "
                + "\"ff:ff:ff:ff:ff:ff\"")));
        assertEquals("deployment.replyMac 'ff:ff:ff:ff:ff:ff' must be a host's unicast address", multicast.getMessage());
        assertEquals(before, w.switches.total());
    }
}
