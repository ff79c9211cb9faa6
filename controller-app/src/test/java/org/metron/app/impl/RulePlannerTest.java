package org.metron.app.impl;

import org.metron.app.api.Deployments;

import org.junit.Test;
import org.metron.agent.v1.NicRule;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.HeaderWrite;
import org.metron.synth.MatchField;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.VlanIdCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** Rule generation: priorities, tags, transit and return paths, partial offload, NIC rules, pipeline. */
public class RulePlannerTest {
    private static final ChainId C = ChainId.of("c");
    private static final ConnectPoint IN = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1");
    private static final ConnectPoint OUT = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3");
    private final TestNetwork net = Fixtures.network(1);
    private final MetronServer server = Fixtures.server(0, new TestAgent("a:1", 4, 0));

    private DeploymentPlan plan(TagType type, CompiledChain compiled, DeviceId offload, int position) {
        List<GroupAssignment> groups = new ArrayList<>();
        for (int g = 0; g < compiled.groups().size(); g++) {
            groups.add(new GroupAssignment("g" + g, Tag.of(type, 7 + g), g, compiled.groups().get(g).classIds()));
        }
        Placement p = new Placement(C, Optional.of(server.id()), "eth0", "eth1", Optional.of(offload), "OPENFLOW13",
                groups);
        Deployment d = Deployments.of(type, 2, 2, false, IN, OUT, 2);
        OffloadChoice o = new OffloadChoice(offload, compiled.target(), compiled,
                net.path(IN, server.attachment("eth0").get()).get(), position, List.of(), List.of());
        return new RulePlanner(Fixtures.APP, net).plan(C, d, p, Optional.of(server), true, o, groups.get(0).tag());
    }

    private static List<FlowRule> role(DeploymentPlan p, DeviceId d, Role role) {
        return p.switchRules().get(d).stream().filter(r -> r.role() == role).map(InstalledRule::rule)
                .collect(Collectors.toList());
    }

    private static <T extends Criterion> T crit(FlowRule r, Criterion.Type t) {
        @SuppressWarnings("unchecked")
        T c = (T) r.selector().getCriterion(t);
        return c;
    }

    private static List<Instruction> instr(FlowRule r) {
        return r.treatment().allInstructions();
    }

    @Test
    public void prioritiesKeepOrderAndEqualities() {
        RuleMatch any = RuleMatch.builder().build();
        List<OffloadRule> rules = List.of(OffloadRule.of(900, any, RuleAction.drop()),
                OffloadRule.of(500, any, RuleAction.drop()), OffloadRule.of(500, any, RuleAction.drop()),
                OffloadRule.of(-3, any, RuleAction.drop()));
        assertArrayEquals(new int[]{1002, 1001, 1001, RulePlanner.DEFAULT_DROP_PRIORITY}, RulePlanner.priorities(rules));
    }

    @Test
    public void macTagsOffloadTransitAndReturn() {
        DeploymentPlan p = plan(TagType.MAC, Fixtures.compiled("c", TargetProfile.OPENFLOW13), Fixtures.D1, 0);
        // install order: s2 (transit + return) before s1 (offload device) last
        assertEquals(List.of(Fixtures.D2, Fixtures.D1), new ArrayList<>(p.switchRules().keySet()));

        List<FlowRule> off = role(p, Fixtures.D1, Role.OFFLOAD);
        assertEquals(4, off.size());
        assertEquals(List.of(1002, 1001, RulePlanner.DEFAULT_DROP_PRIORITY, RulePlanner.DEFAULT_DROP_PRIORITY), off.stream().map(FlowRule::priority)
                .collect(Collectors.toList()));
        FlowRule tcp = off.get(0);
        assertEquals(PortNumber.portNumber(1), ((PortCriterion) crit(tcp, Criterion.Type.IN_PORT)).port());
        assertEquals(80, ((TcpPortCriterion) crit(tcp, Criterion.Type.TCP_DST)).tcpPort().toInt());
        assertEquals(List.of(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:07:00:00")),
                Instructions.createOutput(PortNumber.portNumber(2))), instr(tcp));
        FlowRule udp = off.get(1);
        assertEquals(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:08:00:01")), instr(udp).get(0));
        assertTrue(off.get(2).treatment().clearedDeferred() || instr(off.get(2)).isEmpty()
                || instr(off.get(2)).get(0).type() == Instruction.Type.NOACTION);

        List<FlowRule> transit = role(p, Fixtures.D2, Role.TRANSIT);
        assertEquals(2, transit.size());
        EthCriterion g0 = crit(transit.get(0), Criterion.Type.ETH_DST_MASKED);
        assertEquals(MacAddress.valueOf("02:4d:00:07:00:00"), g0.mac());
        assertEquals(MacAddress.valueOf("ff:ff:ff:ff:00:00"), g0.mask());
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(10))), instr(transit.get(0)));

        // return: server eth1 (s2:20) -> s2:1 -> s1:2 -> s1:3, matching the egress marker the agent writes
        FlowRule back2 = role(p, Fixtures.D2, Role.RETURN).get(0);
        assertEquals(PortNumber.portNumber(20), ((PortCriterion) crit(back2, Criterion.Type.IN_PORT)).port());
        assertEquals(MacAddress.valueOf("02:4d:00:07:ff:fe"),
                ((EthCriterion) crit(back2, Criterion.Type.ETH_DST)).mac());
        assertTrue(back2.priority() > transit.get(0).priority());
        FlowRule back1 = role(p, Fixtures.D1, Role.RETURN).get(0);
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(3))), instr(back1));
        assertEquals("02:4d:00:07:ff:fe", p.pipeline().getEgress(0).getDstMac());
        assertEquals("eth1", p.pipeline().getEgress(0).getNic());
    }

    @Test
    public void vlanTagsPushOnOffloadMatchInTransitPopOnEgress() {
        DeploymentPlan p = plan(TagType.VLAN, Fixtures.compiled("c", TargetProfile.OPENFLOW13), Fixtures.D1, 0);
        FlowRule tcp = role(p, Fixtures.D1, Role.OFFLOAD).get(0);
        List<Instruction> i = instr(tcp);
        assertEquals(Instructions.pushVlan(), i.get(0));
        assertEquals(Instructions.modVlanId(VlanId.vlanId((short) 7)), i.get(1));
        assertEquals(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:00:00:00")), i.get(2));
        VlanIdCriterion v = crit(role(p, Fixtures.D2, Role.TRANSIT).get(1), Criterion.Type.VLAN_VID);
        assertEquals(VlanId.vlanId((short) 8), v.vlanId());
        FlowRule last = role(p, Fixtures.D1, Role.RETURN).get(0);
        assertEquals(L2ModificationInstruction.L2SubType.VLAN_POP,
                ((L2ModificationInstruction) instr(last).get(0)).subtype());
        assertEquals(7, p.pipeline().getEgress(0).getVlan());
        NicRule nr = p.nicRules().get(1);
        assertEquals(8, nr.getMatch().getVlan());
        assertEquals(1, nr.getAction().getQueue());
    }

    @Test
    public void partialOffloadSendsUnclassifiedToTheClassifyingGroup() {
        // the device could hold the port-80 rule but not the next one: the rest goes to software
        CompiledChain partial = new CompiledChain("c", TargetProfile.P4_TAGGER,
                Fixtures.compiled("c", TargetProfile.NONE).classes(),
                Fixtures.compiled("c", TargetProfile.NONE).groups(),
                List.of(OffloadRule.of(2, RuleMatch.builder().ethType(0x0800).ipProto(6)
                                .l4Dst(RangeMatch.exact(80, 16)).build(), RuleAction.toServer(0)),
                        OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.toServer(TrafficClass.UNCLASSIFIED))),
                List.of("fw.out0"), new SynthStats(3, 3, 2, 2, Map.of()));
        DeploymentPlan p = plan(TagType.MAC, partial, Fixtures.D1, 0);
        List<FlowRule> off = role(p, Fixtures.D1, Role.OFFLOAD);
        assertEquals(2, off.size());
        assertTrue(off.get(0).priority() > off.get(1).priority());
        // group 1 classifies: its tag, class bits ffff
        assertEquals(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:08:ff:ff")), instr(off.get(1)).get(0));
    }

    @Test
    public void softwareOnlyChainGetsOneCatchAllRule() {
        DeploymentPlan p = plan(TagType.MAC, Fixtures.compiled("c", TargetProfile.NONE), Fixtures.D1, 0);
        List<FlowRule> off = role(p, Fixtures.D1, Role.OFFLOAD);
        assertEquals(1, off.size());
        assertEquals(1, off.get(0).selector().criteria().size());
        assertEquals(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:08:ff:ff")), instr(off.get(0)).get(0));
    }

    @Test
    public void offloadFurtherDownThePathCarriesTrafficThroughEarlierSwitches() {
        DeploymentPlan p = plan(TagType.MAC, Fixtures.compiled("c", TargetProfile.OPENFLOW13), Fixtures.D2, 1);
        List<FlowRule> pre = role(p, Fixtures.D1, Role.TRANSIT);
        assertEquals(1, pre.size());
        assertEquals(RulePlanner.PRE_TRANSIT_PRIORITY, pre.get(0).priority());
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(2))), instr(pre.get(0)));
        FlowRule tcp = role(p, Fixtures.D2, Role.OFFLOAD).get(0);
        assertEquals(PortNumber.portNumber(1), ((PortCriterion) crit(tcp, Criterion.Type.IN_PORT)).port());
        assertEquals(Instructions.createOutput(PortNumber.portNumber(10)), instr(tcp).get(1));
        assertEquals(Fixtures.D2, new ArrayList<>(p.switchRules().keySet()).get(p.switchRules().size() - 1));
    }

    @Test
    public void classesThatNeedNoServerGoStraightToEgressWithTheirWrites() {
        CompiledChain c = new CompiledChain("c", TargetProfile.OPENFLOW13,
                List.of(new TrafficClass(0, List.of("udp"), 0, List.of(), true, "", "rewrite")),
                List.of(new ClassGroup(0, List.of(), "input -> [0]output;", "", true)),
                List.of(OffloadRule.of(5, RuleMatch.builder().ethType(0x0800).ipProto(17).build(),
                        RuleAction.toEgress(0, List.of(HeaderWrite.of(MatchField.IP_DST, "10.1.1.1"),
                                HeaderWrite.of(MatchField.L4_DST, "53")), true))),
                List.of("fw.out0"), new SynthStats(1, 1, 1, 0, Map.of()));
        DeploymentPlan p = plan(TagType.MAC, c, Fixtures.D1, 0);
        FlowRule r = role(p, Fixtures.D1, Role.OFFLOAD).get(0);
        List<Instruction> i = instr(r);
        assertEquals(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:07:ff:fe")), i.get(0));
        assertEquals(Instructions.modL3Dst(org.onlab.packet.IpAddress.valueOf("10.1.1.1")), i.get(1));
        assertEquals(Instructions.modUdpDst(org.onlab.packet.TpPort.tpPort(53)), i.get(2));
        assertEquals(Instructions.decNwTtl(), i.get(3));
        assertEquals(Instructions.createOutput(PortNumber.portNumber(3)), i.get(4));
    }

    @Test
    public void nicRuleIdsAreStablePerChainAndGroup() {
        DeploymentPlan a = plan(TagType.MAC, Fixtures.compiled("c", TargetProfile.OPENFLOW13), Fixtures.D1, 0);
        DeploymentPlan b = plan(TagType.MAC, Fixtures.compiled("c", TargetProfile.OPENFLOW13), Fixtures.D1, 0);
        assertEquals(a.nicRules(), b.nicRules());
        NicRule r = a.nicRules().get(0);
        assertEquals("02:4d:00:07:00:00", r.getMatch().getEthDst());
        assertEquals("ff:ff:ff:ff:00:00", r.getMatch().getEthDstMask());
        assertTrue(r.getId() != a.nicRules().get(1).getId());
        assertEquals(2, a.pipeline().getGroupsCount());
        assertEquals(7, a.pipeline().getGroups(0).getTag().getValue());
        assertEquals(List.of(0), a.pipeline().getGroups(0).getClassIdsList());
    }
}
