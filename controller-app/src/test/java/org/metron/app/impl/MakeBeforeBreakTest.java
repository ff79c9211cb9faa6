package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.FiveTuple;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.TagAllocation;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.junit.Before;
import org.junit.Test;
import org.metron.synth.CompiledChain;
import org.onosproject.net.flow.FlowRule;

import com.google.protobuf.ByteString;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Chain updates make-before-break (docs/updates.md) through ChainManager with the real synthesizer: which elements
 * carry state, the order of the agent and switch operations, and that every failure before traffic moves leaves
 * the running version exactly as it was. The agent and switches are the in-memory stand-ins (TestAgent,
 * TestSwitches); the e2e tests (tests/e2e/test_update_e2e.py) run the same on real OVS and agents.
 */
public class MakeBeforeBreakTest {
    private static final ChainId ID = ChainId.of("demo");
    private World w;
    private TestAgent agent;

    /**
     * FW(deny `denied`, allow udp to `dst`:`port`) -> NAPT(`napt`) -> LB, as the demo's chain. The destination
     * host keeps chains apart that share an ingress point: the switch cannot classify non-first fragments, so a
     * chain sends those of its traffic to software, and two chains taking fragments of one address would overlap.
     */
    static String chain(String name, String dst, int port, String denied, String napt, int cores, int ingressPort) {
        String fw = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(deny src host " + denied
                + ", allow dst host " + dst + " and udp and dst port " + port + ", deny all) -> Unstrip(14) "
                + "-> ToDevice(out0);";
        String nat = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: IPRewriter(pattern " + napt
                + " 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);";
        String lb = "rr :: RoundRobinIPMapper(- - 10.0.2.1 8080 0 1, - - 10.0.2.2 8080 0 1);\\n"
                + "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> lb :: IPRewriter(rr, drop) -> Unstrip(14) "
                + "-> ToDevice(out0);";
        return "{\"name\": \"" + name + "\", \"nfs\": [{\"name\": \"fw\", \"click\": \"" + fw + "\"},"
                + "{\"name\": \"napt\", \"click\": \"" + nat + "\"}, {\"name\": \"lb\", \"click\": \"" + lb + "\"}],"
                + " \"links\": [{\"from\": \"fw.out0\", \"to\": \"napt.in0\"}, {\"from\": \"napt.out0\", "
                + "\"to\": \"lb.in0\"}], \"ingress\": [\"fw.in0\"], \"egress\": [\"lb.out0\"],"
                + " \"deployment\": {\"tagType\": \"mac\", \"cpuCores\": " + cores + ", \"maxCpuCores\": "
                + Math.max(cores, 2) + ", \"ingressPoint\": \"" + Fixtures.S1 + "/" + ingressPort
                + "\", \"egressPoint\": \"" + Fixtures.S1 + "/3\"}}";
    }

    static String chain(int port, String denied, String napt, int cores) {
        return chain(ID.name(), "10.0.0.2", port, denied, napt, cores, 1);
    }

    @Before
    public void setUp() {
        w = new World(1, Synthesis.SYNTHESIZER, 3);
        agent = w.agents.get(0);
        assertEquals(ChainState.ACTIVE, w.manager.submit(chain(5000, "10.1.0.1", "192.0.2.1", 1)).state());
    }

    /** The stateful element (class SynthRewriter) of the group's config. */
    private static String rewriter(GroupSpec g) {
        return StateCarry.declarations(g.getClickConfig()).entrySet().stream()
                .filter(e -> e.getValue().startsWith("SynthRewriter(")).map(Map.Entry::getKey).findFirst()
                .orElseThrow(() -> new AssertionError("no SynthRewriter in " + g.getClickConfig()));
    }

    private static StateTable table(String element, int flows, int firstPort) {
        StateTable.Builder t = StateTable.newBuilder().setElement(element).setKind("SynthRewriter");
        for (int i = 0; i < flows; i++) {
            FiveTuple key = FiveTuple.newBuilder().setSrcIp(ByteString.copyFrom(new byte[] {10, 0, 0, 1}))
                    .setDstIp(ByteString.copyFrom(new byte[] {10, 0, 0, 2})).setSrcPort(20000 + i).setDstPort(5000)
                    .setProto(17).build();
            t.addEntries(FlowEntry.newBuilder().setKey(key).setMapped(key.toBuilder()
                    .setSrcIp(ByteString.copyFrom(new byte[] {(byte) 192, 0, 2, 1})).setSrcPort(firstPort + i)));
        }
        return t.build();
    }

    /**
     * Everything the running version is: record (its definition and state; a refused update is recorded beside
     * them, with the error), placement, tags, rules, agent pipeline and NIC rules.
     */
    private List<Object> running() {
        org.metron.app.api.Chain c = w.manager.chain(ID).get();
        return List.of(List.of(c.json(), c.deployment(), c.state(), c.reason(), c.pending()),
                w.manager.placement(ID).get(), new HashSet<>(w.manager.tags()),
                new HashSet<>(w.switches.rules(Fixtures.D1)), new HashSet<>(w.switches.rules(Fixtures.D2)),
                agent.pipelines(), agent.nicRules().keySet(), w.store.installed().get(ID).get().value());
    }

    @Test
    public void anUpdateRunsTheNewVersionBesideTheOldOneAndCarriesTheStateOfUnchangedElements() {
        Placement before = w.manager.placement(ID).get();
        GroupSpec oldGroup = agent.pipelines().get(ID.name()).getGroups(0);
        String rw = rewriter(oldGroup);
        agent.state(ID.name(), oldGroup.getGroupId(), List.of(table(rw, 3, 1024)));
        Set<org.metron.app.api.Tag> oldTags = before.groups().stream().map(g -> g.tag()).collect(Collectors.toSet());
        List<FlowRule> oldRules = w.switches.rules(Fixtures.D1);
        int callsBefore = agent.calls().size();
        int switchLogBefore = w.switches.log().size();

        // the firewall denies another source: the stateful part (NAPT -> LB) is the same
        Chain up = w.manager.update(ID, chain(5000, "10.1.0.9", "192.0.2.1", 1));

        assertEquals(ChainState.ACTIVE, up.state());
        assertTrue(up.version() > w.manager.chain(ID).map(c -> 0L).orElse(1L));
        assertTrue(up.reason(), up.reason().contains("3 flows carried over"));
        Placement after = w.manager.placement(ID).get();
        assertTrue(after.groups().toString(), after.groups().stream().allMatch(g -> g.groupId().matches("g\\d+~v\\d+")));
        assertEquals(before.server(), after.server());
        // new tags; the old ones are released
        Set<org.metron.app.api.Tag> newTags = after.groups().stream().map(g -> g.tag()).collect(Collectors.toSet());
        assertTrue(java.util.Collections.disjoint(oldTags, newTags));
        assertEquals(newTags, w.manager.tags().stream().map(TagAllocation::tag).collect(Collectors.toSet()));
        // new port shares too: both versions map new flows while traffic moves (docs/scaling.md#port-shares)
        assertFalse(before.portShares().isEmpty());
        assertEquals(after.groups().size(), after.portShares().size());
        assertTrue(before.portShares() + " " + after.portShares(),
                java.util.Collections.disjoint(before.portShares(), after.portShares()));
        // the agent runs only the new groups, the carried table in the group that took the old one's classes
        DeployPipelineRequest p = agent.pipelines().get(ID.name());
        assertEquals(after.groups().size(), p.getGroupsCount());
        GroupSpec newGroup = p.getGroupsList().stream().filter(g -> g.getClassIdsList()
                .containsAll(oldGroup.getClassIdsList())).findFirst().orElseThrow();
        List<StateTable> carried = agent.state(ID.name(), newGroup.getGroupId());
        assertEquals(1, carried.size());
        assertEquals(table(rw, 3, 1024).getEntriesList(), carried.get(0).getEntriesList());
        assertTrue(agent.state(ID.name(), oldGroup.getGroupId()).isEmpty());
        assertEquals(after.groups().stream().filter(g -> g.groupId().equals(newGroup.getGroupId())).findFirst()
                .orElseThrow().portShare(), newGroup.getPortShare().getIndex());
        assertEquals(org.metron.app.api.GroupAssignment.PORT_SHARES, newGroup.getPortShare().getCount());
        // egress marker of the new version: its first tag
        assertTrue(p.getEgress(0).getDstMac(), p.getEgress(0).getDstMac().startsWith(String.format("02:4d:%02x:%02x",
                after.groups().get(0).tag().group() >> 8, after.groups().get(0).tag().group() & 0xff)));

        // order: new NIC rules, new groups beside the old, state copied, (switches), sync, old groups and NIC rules go
        List<String> calls = agent.calls().subList(callsBefore, agent.calls().size());
        List<String> order = calls.stream().filter(c -> !c.equals("GetResources") && !c.equals("GetStats")
                && !c.equals("Health")).collect(Collectors.toList());
        assertEquals(List.of("InstallNicRules", "UpdatePipeline", "ExportState", "ImportState", "ExportState",
                "ImportState", "UpdatePipeline", "RemoveNicRules"), order);
        // the copy makes the new group follow the old one on their core until it retires (a flow the old group
        // maps before the move keeps its mapping); the sync after the move only merges
        List<org.metron.agent.v1.ImportStateRequest> imports = agent.imports();
        assertEquals(2, imports.size());
        assertTrue(imports.get(0).getFollowSource() && !imports.get(0).getMerge());
        assertEquals(oldGroup.getGroupId(), imports.get(0).getSnapshot().getGroupId());
        assertFalse(imports.get(1).getFollowSource());
        assertTrue(imports.get(1).getMerge());
        assertFalse(up.reason(), up.reason().contains("not followed"));
        // switches: everything checked first, then live device by device; the offload device last, in one batch
        // with the removal of the old entry rules the new version does not overwrite
        List<String> sw = w.switches.log().subList(switchLogBefore, w.switches.log().size());
        int lastCommit = -1;
        for (int i = 0; i < sw.size(); i++) {
            lastCommit = sw.get(i).startsWith("commit") ? i : lastCommit;
        }
        assertTrue(sw.toString(), sw.get(lastCommit).startsWith("commit " + Fixtures.S1));
        assertTrue(sw.toString(), sw.stream().limit(lastCommit).noneMatch(s -> s.startsWith("remove")));
        // afterwards only the new version's rules are left
        assertFalse(w.switches.rules(Fixtures.D1).isEmpty());
        assertFalse(w.switches.rules(Fixtures.D1).containsAll(oldRules));
        assertEquals(new HashSet<>(w.store.installed().get(ID).get().value().switchRules().stream()
                .map(x -> x.rule()).collect(Collectors.toList())), new HashSet<>(concat(w.switches.rules(Fixtures.D1),
                w.switches.rules(Fixtures.D2))));
    }

    private static List<FlowRule> concat(List<FlowRule> a, List<FlowRule> b) {
        List<FlowRule> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    public void aChangedStatefulElementStartsEmpty() {
        GroupSpec oldGroup = agent.pipelines().get(ID.name()).getGroups(0);
        agent.state(ID.name(), oldGroup.getGroupId(), List.of(table(rewriter(oldGroup), 3, 1024)));
        // another NAPT address: the rewriter is another element, its flows would be translated wrongly
        Chain up = w.manager.update(ID, chain(5000, "10.1.0.1", "192.0.2.7", 1));
        assertEquals(ChainState.ACTIVE, up.state());
        assertTrue(up.reason(), up.reason().contains("0 flows carried over (no unchanged stateful element)"));
        assertFalse(agent.calls().contains("ImportState"));
        DeployPipelineRequest p = agent.pipelines().get(ID.name());
        assertTrue(p.getGroupsList().stream().allMatch(g -> agent.state(ID.name(), g.getGroupId()).isEmpty()));
    }

    @Test
    public void stateCarriesOnlyBetweenGroupsWithTheSameStatefulKeyAndDeclaration() {
        CompiledChain base = Synthesis.SYNTHESIZER.compile(ChainRequests.parse(chain(5000, "10.1.0.1",
                "192.0.2.1", 1)).spec(), org.metron.synth.TargetProfile.OPENFLOW13);
        Placement old = w.manager.placement(ID).get();
        Placement renamed = new Placement(ID, old.server(), old.nic(), old.egressNic(), old.offloadDevice(),
                old.offloadProfile(), old.groups().stream().map(g -> new org.metron.app.api.GroupAssignment(
                g.groupId() + "~v1", g.tag(), g.core(), g.classIds())).collect(Collectors.toList()));
        StateCarry same = StateCarry.between(old, base, renamed, base);
        assertEquals(old.groups().size(), same.sources().size());
        same.sources().forEach((g, src) -> assertEquals(g.replace("~v1", ""), src.get(0).oldGroup()));

        CompiledChain otherNapt = Synthesis.SYNTHESIZER.compile(ChainRequests.parse(chain(5000, "10.1.0.1",
                "192.0.2.7", 1)).spec(), org.metron.synth.TargetProfile.OPENFLOW13);
        assertTrue(StateCarry.between(old, base, renamed, otherNapt).sources().isEmpty());

        // the table of an element absent from the source list is not carried
        StateCarry.Source only = new StateCarry.Source("g0", Set.of("rw"));
        org.metron.agent.v1.StateSnapshot exported = org.metron.agent.v1.StateSnapshot.newBuilder()
                .setPipelineId("demo").setGroupId("g0").addTables(table("rw", 2, 1024))
                .addTables(table("other", 2, 2048)).build();
        org.metron.agent.v1.StateSnapshot part = StateCarry.carried(exported, only, "demo");
        assertEquals(List.of("rw"), part.getTablesList().stream().map(StateTable::getElement)
                .collect(Collectors.toList()));
    }

    @Test
    public void anUpdateThatCannotBePlacedLeavesTheRunningVersionUntouched() {
        List<Object> before = running();
        int callsBefore = agent.calls().size();
        // 9 cores on a 4-core server
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.update(ID, chain(5000, "10.1.0.9", "192.0.2.1", 9)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("its server " + Fixtures.serverId(0)
                + " cannot take it"));
        assertEquals(before, running());
        assertFalse(agent.calls().subList(callsBefore, agent.calls().size()).contains("UpdatePipeline"));
    }

    @Test
    public void anAgentThatCannotStartTheNewVersionLeavesTheRunningOneUntouched() {
        List<Object> before = running();
        agent.failUpdate(true);
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.update(ID, chain(5000, "10.1.0.9", "192.0.2.1", 1)));
        assertEquals(Fault.AGENT_FAILURE, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("the running version is untouched (the new one was "
                + "rolled back)"));
        assertEquals(before, running());
    }

    @Test
    public void aSwitchThatRejectsTheMoveRollsTheNewVersionBack() {
        GroupSpec oldGroup = agent.pipelines().get(ID.name()).getGroups(0);
        agent.state(ID.name(), oldGroup.getGroupId(), List.of(table(rewriter(oldGroup), 2, 1024)));
        List<Object> before = running();
        w.switches.reject(Fixtures.D1);
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.update(ID, chain(5000, "10.1.0.9", "192.0.2.1", 1)));
        assertEquals(Fault.SWITCH_FAILURE, e.fault());
        assertEquals(before, running());
        // the old group kept its flows; the new groups (and their copies) are gone
        assertEquals(2, agent.state(ID.name(), oldGroup.getGroupId()).get(0).getEntriesCount());
        assertEquals(0, w.switches.openStages());
        // it runs on: a later update goes through
        w.switches.accept(Fixtures.D1);
        assertEquals(ChainState.ACTIVE, w.manager.update(ID, chain(5000, "10.1.0.9", "192.0.2.1", 1)).state());
    }

    @Test
    public void chainsShareAnIngressPointWhenTheirTrafficIsDisjoint() {
        // same denied source, another destination: neither's rules take the other's traffic
        assertEquals(ChainState.ACTIVE, w.manager.submit(chain("other", "10.0.0.3", 5000, "10.1.0.1", "192.0.2.2",
                1, 1)).state());
        assertEquals(2, w.manager.placements().size());
        // the same destination and port: refused, naming both chains and a packet both would take
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.submit(chain("third", "10.0.0.2", 5000, "10.1.0.1", "192.0.2.3", 1, 1)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().startsWith("chain third's traffic and chain demo's traffic both "
                + "enter at " + Fixtures.S1 + "/1 and overlap, e.g. the packet '"));
        assertTrue(e.getMessage(), e.getMessage().contains("dst host 10.0.0.2"));
        // as any chain that cannot be placed: FAILED, saying why, holding nothing
        assertEquals(ChainState.FAILED, w.manager.chain(ChainId.of("third")).get().state());
        assertEquals(e.getMessage(), w.manager.chain(ChainId.of("third")).get().reason());
        assertFalse(w.manager.placement(ChainId.of("third")).isPresent());
        // another denied source: its deny rule would drop the first chain's traffic from that source
        MetronException d = assertThrows(MetronException.class,
                () -> w.manager.submit(chain("fourth", "10.0.0.4", 5000, "10.0.0.1", "192.0.2.4", 1, 1)));
        assertTrue(d.getMessage(), d.getMessage().contains("src host 10.0.0.1"));
        // the two sharing the point are whole, and either one goes without taking the other's rules
        w.manager.remove(ID);
        List<FlowRule> left = w.switches.rules(Fixtures.D1);
        assertTrue(left.toString(), left.stream().anyMatch(r -> r.selector().toString().contains("10.0.0.3")));
        assertEquals(new HashSet<>(w.store.installed().get(ChainId.of("other")).get().value().switchRules().stream()
                .map(x -> x.rule()).collect(Collectors.toList())), new HashSet<>(concat(left,
                w.switches.rules(Fixtures.D2))));
    }
}
