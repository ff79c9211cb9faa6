package org.metron.app.impl;

import org.metron.app.api.Deployments;

import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
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
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.DeviceRole;
import org.metron.app.store.ChainStore;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.IpPrefix;
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
import org.onosproject.net.flow.criteria.VlanIdCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Replies of a chain with a reply ingress: reply rules where replies enter (the egress point, s1:3), transit to
 * the server NIC the pipeline reads (eth0, s2:10) under the forward group's tag, the agent's reply egress
 * marked 02:4d:GG:GG:ff:fc and sent back through eth0, and reply return rules from there to the ingress point
 * (s1:1). Standard fixture network: s1:2 - s2:1, server eth0 at s2:10, eth1 at s2:20.
 */
public class ReplyRulesTest {
    private static final ChainId C = ChainId.of("c");
    private static final ConnectPoint IN = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1");
    private static final ConnectPoint OUT = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3");
    private final TestNetwork net = Fixtures.network(1);
    private final MetronServer server = Fixtures.server(0, new TestAgent("a:1", 4, 0));

    /**
     * NAPT with replies as the synthesizer compiles it: class 0 = TCP/80 forward (NAPT), class 1 = the rest
     * (dropped), class 2 = replies to the NAPT address (restored by the same rewriter, egress 1 = fw.out1),
     * class 3 = other replies (dropped). One group holds classes 0 and 2 and classifies in software.
     */
    static CompiledChain naptWithReplies(List<OffloadRule> replyRules, List<String> egress) {
        List<TrafficClass> classes = List.of(
                new TrafficClass(0, List.of("tcp dst port 80"), 0, List.of(), false, "napt", "fw: allow; napt"),
                new TrafficClass(1, List.of("-"), -1, List.of(), false, "", "fw: deny"),
                new TrafficClass(2, List.of("dst host 192.0.2.1 and tcp"), 1, List.of(), false, "napt",
                        "reply: restore by input 1 of the SynthRewriter of 'napt'; egress 1 (fw.out1)"),
                new TrafficClass(3, List.of("-"), -1, List.of(), false, "", "reply: drop"));
        List<ClassGroup> groups = List.of(new ClassGroup(0, List.of(0, 2),
                "rw :: SynthRewriter(- - - - -); input -> dir :: Classifier(4/0002, -); dir[0] -> [1]rw; "
                        + "dir[1] -> [0]rw; rw[0] -> [0]output; rw[1] -> [1]output;", "napt", true));
        List<OffloadRule> rules = List.of(
                OffloadRule.of(20, RuleMatch.builder().ethType(0x0800).ipProto(6).l4Dst(RangeMatch.exact(80, 16))
                        .build(), RuleAction.toServer(0)),
                OffloadRule.of(10, RuleMatch.builder().build(), RuleAction.drop()));
        return new CompiledChain("c", TargetProfile.OPENFLOW13, classes, groups, rules, replyRules, egress,
                new SynthStats(4, 4, rules.size() + replyRules.size(), 0, Map.of()));
    }

    static List<OffloadRule> replyRules() {
        return List.of(
                OffloadRule.of(30, RuleMatch.builder().ethType(0x0800).ipProto(6)
                        .ipDst(IpPrefix.of(false, BigInteger.valueOf(0xc0000201L), 32)).build(),
                        RuleAction.toServer(2)),
                OffloadRule.of(20, RuleMatch.builder().ethType(0x86dd).build(),
                        RuleAction.toServer(TrafficClass.REPLY_UNCLASSIFIED)),
                OffloadRule.of(10, RuleMatch.builder().build(), RuleAction.drop()));
    }

    private DeploymentPlan plan(TagType type, CompiledChain compiled, ConnectPoint in, ConnectPoint out) {
        List<GroupAssignment> groups = new ArrayList<>();
        for (int g = 0; g < compiled.groups().size(); g++) {
            groups.add(new GroupAssignment("g" + g, Tag.of(type, 7 + g), g, compiled.groups().get(g).classIds()));
        }
        Placement p = new Placement(C, Optional.of(server.id()), "eth0", "eth1", Optional.of(Fixtures.D1),
                "OPENFLOW13", groups);
        Deployment d = Deployments.of(type, 2, 2, false, in, out, 2);
        OffloadChoice o = new OffloadChoice(Fixtures.D1, compiled.target(), compiled,
                net.path(in, server.attachment("eth0").get()).get(), 0, List.of(), List.of());
        return new RulePlanner(Fixtures.APP, net).plan(C, d, p, Optional.of(server), true, o, groups.get(0).tag());
    }

    private static List<FlowRule> role(DeploymentPlan p, DeviceId d, Role role) {
        return p.switchRules().get(d).stream().filter(r -> r.role() == role).map(InstalledRule::rule)
                .collect(Collectors.toList());
    }

    private static PortNumber inPort(FlowRule r) {
        return ((PortCriterion) r.selector().getCriterion(Criterion.Type.IN_PORT)).port();
    }

    private static MacAddress ethDst(FlowRule r) {
        return ((EthCriterion) r.selector().getCriterion(Criterion.Type.ETH_DST)).mac();
    }

    private static List<Instruction> instr(FlowRule r) {
        return r.treatment().allInstructions();
    }

    private static FlowRule returnFrom(DeploymentPlan p, DeviceId d, int port, MacAddress marker) {
        List<FlowRule> found = role(p, d, Role.RETURN).stream()
                .filter(r -> inPort(r).toLong() == port && ethDst(r).equals(marker)).collect(Collectors.toList());
        assertEquals(p.switchRules().toString(), 1, found.size());
        return found.get(0);
    }

    @Test
    public void repliesAreClassifiedAtTheEgressPointAndSteeredToTheForwardGroupsCore() {
        DeploymentPlan p = plan(TagType.MAC, naptWithReplies(replyRules(), List.of("napt.out0", "fw.out1")), IN, OUT);

        List<FlowRule> reply = role(p, Fixtures.D1, Role.REPLY);
        assertEquals(3, reply.size());
        assertEquals(List.of(1002, 1001, RulePlanner.DEFAULT_DROP_PRIORITY), reply.stream().map(FlowRule::priority).collect(Collectors.toList()));
        reply.forEach(r -> assertEquals(OUT.port(), inPort(r)));
        // the reply class is tagged with its forward class's group (same tag = same NIC queue = same core)
        assertEquals(List.of(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:07:00:02")),
                Instructions.createOutput(PortNumber.portNumber(2))), instr(reply.get(0)));
        // replies the switch cannot classify go to the classifying group's reply classifier (fffd)
        assertEquals(List.of(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:07:ff:fd")),
                Instructions.createOutput(PortNumber.portNumber(2))), instr(reply.get(1)));
        assertTrue(reply.get(2).treatment().clearedDeferred() || instr(reply.get(2)).isEmpty()
                || instr(reply.get(2)).get(0).type() == Instruction.Type.NOACTION);
        // forward offload rules still match only the ingress port
        role(p, Fixtures.D1, Role.OFFLOAD).forEach(r -> assertEquals(IN.port(), inPort(r)));

        // s2 carries group 7 from s1 to eth0: one transit rule serves forward traffic and replies
        List<FlowRule> transit = role(p, Fixtures.D2, Role.TRANSIT);
        assertEquals(1, transit.size());
        assertEquals(PortNumber.portNumber(1), inPort(transit.get(0)));
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(10))), instr(transit.get(0)));

        // the agent marks egress 1 (fw.out1) as a reply and sends it through eth0, toward the ingress point
        DeployPipelineRequest pipe = p.pipeline();
        assertEquals("eth1", pipe.getEgress(0).getNic());
        assertEquals("02:4d:00:07:ff:fe", pipe.getEgress(0).getDstMac());
        assertEquals("eth0", pipe.getEgress(1).getNic());
        assertEquals("02:4d:00:07:ff:fc", pipe.getEgress(1).getDstMac());

        // forward return: eth1 (s2:20) -> s1:3; reply return: eth0 (s2:10) -> s2:1 -> s1:2 -> s1:1
        MacAddress fwd = MacAddress.valueOf("02:4d:00:07:ff:fe");
        MacAddress back = MacAddress.valueOf("02:4d:00:07:ff:fc");
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(1))),
                instr(returnFrom(p, Fixtures.D2, 20, fwd)));
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(3))),
                instr(returnFrom(p, Fixtures.D1, 2, fwd)));
        FlowRule r2 = returnFrom(p, Fixtures.D2, 10, back);
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(1))), instr(r2));
        assertTrue(r2.priority() > transit.get(0).priority());
        assertEquals(List.of(Instructions.createOutput(PortNumber.portNumber(1))),
                instr(returnFrom(p, Fixtures.D1, 2, back)));
        // s2 (transit, return) before s1 (reply rules and offload rules) last
        assertEquals(List.of(Fixtures.D2, Fixtures.D1), new ArrayList<>(p.switchRules().keySet()));
    }

    @Test
    public void vlanRepliesPushTheGroupVlanAndTheReplyReturnPopsItAtTheIngressPoint() {
        DeploymentPlan p = plan(TagType.VLAN, naptWithReplies(replyRules(), List.of("napt.out0", "fw.out1")), IN,
                OUT);
        FlowRule tagged = role(p, Fixtures.D1, Role.REPLY).get(0);
        assertEquals(Instructions.modVlanId(VlanId.vlanId((short) 7)), instr(tagged).get(1));
        assertEquals(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:00:00:02")), instr(tagged).get(2));
        MacAddress back = MacAddress.valueOf("02:4d:00:00:ff:fc");
        FlowRule last = returnFrom(p, Fixtures.D1, 2, back);
        assertEquals(7, ((VlanIdCriterion) last.selector().getCriterion(Criterion.Type.VLAN_VID)).vlanId().toShort());
        assertEquals(List.of(Instructions.popVlan(), Instructions.createOutput(PortNumber.portNumber(1))),
                instr(last));
        assertEquals(7, p.pipeline().getEgress(1).getVlan());
        assertEquals("02:4d:00:00:ff:fc", p.pipeline().getEgress(1).getDstMac());
    }

    @Test
    public void withoutReplyRulesEveryReplyGoesToTheReplyClassifier() {
        DeploymentPlan p = plan(TagType.MAC, naptWithReplies(List.of(), List.of("napt.out0", "fw.out1")), IN, OUT);
        List<FlowRule> reply = role(p, Fixtures.D1, Role.REPLY);
        assertEquals(1, reply.size());
        assertEquals(OUT.port(), inPort(reply.get(0)));
        assertEquals(1, reply.get(0).selector().criteria().size());
        assertEquals(List.of(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:07:ff:fd")),
                Instructions.createOutput(PortNumber.portNumber(2))), instr(reply.get(0)));
    }

    @Test
    public void aChainWithoutRepliesGetsNoReplyRules() {
        DeploymentPlan p = plan(TagType.MAC, Fixtures.compiled("c", TargetProfile.OPENFLOW13), IN, OUT);
        assertTrue(p.allSwitchRules().stream().noneMatch(r -> r.role() == Role.REPLY));
        assertTrue(p.allSwitchRules().stream().noneMatch(r -> r.rule().selector().toString()
                .contains("FF:FC")));
        assertEquals(1, p.pipeline().getEgressCount());
    }

    @Test
    public void repliesNeedAnEgressPointOtherThanTheIngressPoint() {
        MetronException e = assertThrows(MetronException.class, () -> plan(TagType.MAC,
                naptWithReplies(replyRules(), List.of("napt.out0", "fw.out1")), IN, IN));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("reply ingress") && e.getMessage().contains(IN.toString()));
    }

    @Test
    public void anEgressSharedByForwardTrafficAndRepliesIsRefusedNamingIt() {
        // class 2 (a reply) leaving at egress 0 like the forward class 0
        CompiledChain c = naptWithReplies(replyRules(), List.of("napt.out0"));
        List<TrafficClass> classes = new ArrayList<>(c.classes());
        classes.set(2, new TrafficClass(2, List.of("tcp"), 0, List.of(), false, "napt", "reply: restore; egress 0"));
        CompiledChain shared = new CompiledChain("c", c.target(), classes, c.groups(), c.offloadRules(),
                c.replyRules(), c.egress(), c.stats());
        MetronException e = assertThrows(MetronException.class, () -> plan(TagType.MAC, shared, IN, OUT));
        assertEquals(Fault.INVALID_CHAIN, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("egress 0 (napt.out0)"));
    }

    @Test
    public void replyRulesGoInstalledWithTheChainAndLeaveWithIt() {
        World w = new World(1, (spec, profile) -> naptWithReplies(replyRules(), List.of("napt.out0", "fw.out1")),
                3);
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("c")).state());
        List<RuleInfo> reply = w.manager.rules(Fixtures.D1).stream().filter(r -> r.role() == Role.REPLY)
                .collect(Collectors.toList());
        assertEquals(3, reply.size());
        DeployPipelineRequest pipe = w.agents.get(0).pipelines().get("c");
        assertEquals("02:4d:00:01:ff:fc", pipe.getEgress(1).getDstMac());
        // one NIC rule for the group: replies share the forward classes' tag, so no rule of their own
        assertEquals(1, w.agents.get(0).nicRules().size());
        w.manager.remove(C);
        assertEquals(0, w.switches.total());
        assertFalse(w.agents.get(0).pipelines().containsKey("c"));
    }

    /** {@link Fixtures#chainJsonAt} with a reply ingress: the firewall passes replies from in1 to out1. */
    private static String withReplies(String json) {
        return json.replace("-> ToDevice(out0);", "-> ToDevice(out0); FromDevice(in1) -> ToDevice(out1);")
                .replace("\"ingress\": [\"fw.in0\"]", "\"ingress\": [\"fw.in0\", \"fw.in1\"]")
                .replace("\"egress\": [\"fw.out0\"]", "\"egress\": [\"fw.out0\", \"fw.out1\"]");
    }

    @Test
    public void aChainsRepliesHoldItsEgressPointAgainstOtherChainsArrivals() {
        World w = new World(1, (spec, profile) -> spec.ingress().size() > 1
                ? naptWithReplies(replyRules(), List.of("fw.out0", "fw.out1")) : Fixtures.compiled(spec.name(), profile),
                3);
        assertEquals(ChainState.ACTIVE, w.manager.submit(withReplies(Fixtures.chainJsonAt("a", 1))).state());
        int rules = w.switches.total();

        // a chain entering where a's replies enter would classify them (and a's reply rules its traffic)
        MetronException in = assertThrows(MetronException.class,
                () -> w.manager.submit(Fixtures.chainJsonAt("b", 3)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, in.fault());
        assertTrue(in.getMessage(), in.getMessage().startsWith("chain b's traffic and chain a's replies both enter "
                + "at " + Fixtures.S1 + "/3 and overlap, e.g. the packet 'ip vers 4 and ip proto 6 and dst host "
                + "192.0.2.1 and dst port 80'"));
        // so would a second chain whose replies enter there
        MetronException out = assertThrows(MetronException.class,
                () -> w.manager.submit(withReplies(Fixtures.chainJsonAt("c", 4))));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, out.fault());
        assertTrue(out.getMessage(), out.getMessage().startsWith("chain c's replies and chain a's replies both "
                + "enter at " + Fixtures.S1 + "/3 and overlap"));
        assertEquals(rules, w.switches.total());

        // leaving through a's egress point without replies is fine, as before
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJsonAt("d", 4)).state());
    }

    @Test
    public void replyPlanRulesSurviveTheStoresEncoding() {
        DeploymentPlan p = plan(TagType.VLAN, naptWithReplies(replyRules(), List.of("napt.out0", "fw.out1")), IN,
                OUT);
        for (InstalledRule r : p.allSwitchRules()) {
            InstalledRule back = MetronSerializers.NAMESPACE.deserialize(MetronSerializers.NAMESPACE.serialize(r));
            assertEquals(r.role(), back.role());
            assertTrue("exact match for " + r, back.rule().exactMatch(r.rule()));
            assertEquals(r.rule().treatment(), back.rule().treatment());
        }
    }

    @Test
    public void theRealSynthesizersReplyRulesBecomeSwitchRules() {
        String json = "{\"name\": \"nat\", \"nfs\": [{\"name\": \"napt\", \"click\": "
                + "\"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - "
                + "0 1, drop) -> Unstrip(14) -> ToDevice(out0); FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1]"
                + " -> Unstrip(14) -> ToDevice(out1);\"}], \"links\": [], \"ingress\": [\"napt.in0\", \"napt.in1\"],"
                + " \"egress\": [\"napt.out0\", \"napt.out1\"], \"deployment\": {\"tagType\": \"mac\", \"cpuCores\": 1,"
                + " \"ingressPoint\": \"" + Fixtures.S1 + "/1\", \"egressPoint\": \"" + Fixtures.S1 + "/3\"}}";
        World w = new World(1, Synthesis.SYNTHESIZER, 3);
        assertEquals(ChainState.ACTIVE, w.manager.submit(json).state());
        Placement p = w.manager.placement(ChainId.of("nat")).get();
        List<FlowRule> reply = w.manager.rules(Fixtures.D1).stream().filter(r -> r.role() == Role.REPLY)
                .map(RuleInfo::rule).collect(Collectors.toList());
        assertTrue(reply.toString(), !reply.isEmpty());
        reply.forEach(r -> assertEquals(OUT.port(), inPort(r)));
        // replies to the NAPT address are tagged for a group of the chain (the one with the forward mapping)
        Set<Long> groupBits = p.groups().stream().map(g -> g.tag().groupMac().toLong() >>> 16)
                .collect(Collectors.toSet());
        assertTrue(reply.toString(), reply.stream().anyMatch(r -> r.selector().toString().contains("192.0.2.1/32")
                && r.treatment().allInstructions().stream().anyMatch(i -> i instanceof ModEtherInstruction
                && groupBits.contains(((ModEtherInstruction) i).mac().toLong() >>> 16))));
        DeployPipelineRequest pipe = w.agents.get(0).pipelines().get("nat");
        assertEquals(List.of(p.egressNic(), p.nic()), pipe.getEgressList().stream().map(e -> e.getNic())
                .collect(Collectors.toList()));
        assertTrue(pipe.getEgress(1).getDstMac(), pipe.getEgress(1).getDstMac().endsWith(":ff:fc"));
        w.manager.remove(ChainId.of("nat"));
        assertEquals(0, w.switches.total());
    }

    @Test
    public void aChainWithoutServerSendsItsRepliesStraightBackUnderTheReplyMarker() {
        // forward UDP leaves at egress 0, UDP replies (from port 53) at egress 1; both handled by the switches
        CompiledChain c = Fixtures.switchOnlyUdpWithReplies();
        ConnectPoint out = ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/5");
        Tag marker = Tag.of(TagType.MAC, 9);
        Placement p = new Placement(C, Optional.empty(), "", "", Optional.of(Fixtures.D1), "OPENFLOW13", List.of());
        Deployment d = Deployments.of(TagType.MAC, 1, 1, false, IN, out, 1);
        OffloadChoice o = new OffloadChoice(Fixtures.D1, c.target(), c, net.path(IN, out).get(), 0, List.of(),
                List.of());
        DeploymentPlan plan = new RulePlanner(Fixtures.APP, net).plan(C, d, p, Optional.empty(), false, o, marker);

        FlowRule reply = role(plan, Fixtures.D2, Role.REPLY).get(0);
        assertEquals(out.port(), inPort(reply));
        assertEquals(List.of(Instructions.modL2Dst(MacAddress.valueOf("02:4d:00:09:ff:fc")),
                Instructions.createOutput(PortNumber.portNumber(1))), instr(reply));
        assertEquals(List.of(Instructions.createOutput(IN.port())),
                instr(returnFrom(plan, Fixtures.D1, 2, MacAddress.valueOf("02:4d:00:09:ff:fc"))));
        // forward traffic still leaves under the egress marker toward s2:5
        assertEquals(List.of(Instructions.createOutput(out.port())),
                instr(returnFrom(plan, Fixtures.D2, 1, MacAddress.valueOf("02:4d:00:09:ff:fe"))));
        assertEquals(null, plan.pipeline());
    }

    @Test
    public void aRerouteMovesTheReplyReturnPathToo() {
        // as RerouteTest: ingress on a non-programmable s1, paths s1-s2-s4 and s1-s3-s4, server on s4:10, and the
        // egress point (where replies enter) on s4:20
        String s3 = "of:0000000000000003";
        String s4 = "of:0000000000000004";
        DeviceId d3 = DeviceId.deviceId(s3);
        DeviceId d4 = DeviceId.deviceId(s4);
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OTHER, 0)
                .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 1000).device(s3, DeviceRole.OPENFLOW_SWITCH, 1000)
                .device(s4, DeviceRole.OPENFLOW_SWITCH, 1000)
                .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S1, 3, s3, 1)
                .cable(Fixtures.S2, 2, s4, 1).cable(s3, 2, s4, 2);
        TestAgent agent = new TestAgent("a:1", 4, 0.1).nic("eth0", true, 64);
        TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:a"), agent,
                Map.of("eth0", ConnectPoint.deviceConnectPoint(s4 + "/10"))));
        TestSwitches switches = new TestSwitches();
        Duration t = Duration.ofSeconds(2);
        ChainManager m = new ChainManager(new ChainStore(new LocalStoreFactory(), switches), servers, switches,
                new SingleInstanceLeadership(), new PlacementEngine(servers, net, switches, new Random(1), t),
                new RulePlanner(Fixtures.APP, net), new Deployer(switches, t), t,
                (spec, profile) -> naptWithReplies(replyRules(), List.of("napt.out0", "fw.out1")));
        m.submit(withReplies(Fixtures.chainJson("r")).replace(Fixtures.S1 + "/3", s4 + "/20"));
        ChainId id = ChainId.of("r");
        MacAddress back = Tag.of(TagType.MAC, 1).replyEgressMac();
        assertEquals(3, switches.rules(d4).stream().filter(r -> r.priority() < RulePlanner.TRANSIT_PRIORITY
                && inPort(r).toLong() == 20).count());
        assertTrue(switches.rules(Fixtures.D2).stream().anyMatch(r -> back.equals(ethDstOrNull(r))));

        net.down(Fixtures.S2);
        assertEquals(List.of(id), m.reroute(Fixtures.D2));
        assertEquals(0, switches.rules(Fixtures.D2).size());
        // replies from eth0 (s4:10) now return through s3 to s1
        assertTrue(switches.rules(d3).stream().anyMatch(r -> back.equals(ethDstOrNull(r)) && inPort(r).toLong() == 2
                && instr(r).equals(List.of(Instructions.createOutput(PortNumber.portNumber(1))))));
        assertEquals(1, agent.calls().stream().filter(c -> c.equals("DeployPipeline")).count());
        m.remove(id);
        assertEquals(0, switches.total());
    }

    private static MacAddress ethDstOrNull(FlowRule r) {
        EthCriterion c = (EthCriterion) r.selector().getCriterion(Criterion.Type.ETH_DST);
        return c == null ? null : c.mac();
    }
}
