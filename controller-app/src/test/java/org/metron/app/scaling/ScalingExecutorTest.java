package org.metron.app.scaling;

import org.junit.After;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.metron.agent.v1.ClassStats;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.rest.MetronText;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.NaptFlows;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry.FlowEntryState;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModVlanIdInstruction;
import org.onosproject.store.service.Versioned;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Splits and merges against a real metron-agent (three worker cores, real gRPC, real UpdatePipeline with state
 * cloning) and the ONOS-style switch stand-in: groups, cores, tags, switch rules, flow state and the store after
 * each operation, rollback on a switch failure, recovery of an operation a crashed controller left half done.
 */
public class ScalingExecutorTest {
    private static final String CLICK = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN "
            + "10.9.9.9 1024-65535 - -) -> Unstrip(14) -> [0]output;";
    private static final int CLASSES = 4;
    private static RealAgent agent;
    private static String nic;

    private final List<Rig> rigs = new ArrayList<>();

    @BeforeClass
    public static void startAgent() throws Exception {
        agent = RealAgent.startWorkers("scaling", 3);
        nic = agent.client().getResources().get(10, TimeUnit.SECONDS).getNics(0).getName();
    }

    @AfterClass
    public static void stopAgent() throws Exception {
        if (agent != null) {
            agent.close();
        }
    }

    /** One chain: UDP to ports 1000..1003 are classes 0..3, one NAPT group; everything else dropped. */
    static CompiledChain compiled(String name, TargetProfile profile) {
        List<TrafficClass> classes = new ArrayList<>();
        List<OffloadRule> rules = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (int c = 0; c < CLASSES; c++) {
            classes.add(new TrafficClass(c, List.of("udp dst port " + (1000 + c)), 0, List.of(), false, "napt",
                    "napt"));
            rules.add(OffloadRule.of(20, RuleMatch.builder().ethType(0x0800).ipProto(17)
                    .l4Dst(RangeMatch.exact(1000 + c, 16)).build(), RuleAction.toServer(c)));
            ids.add(c);
        }
        if (name.startsWith("slices")) {
            // as the demo chain's class has: UDP with both ports 0 (what a switch reads from a later fragment)
            rules.add(0, OffloadRule.of(30, RuleMatch.builder().ethType(0x0800).ipProto(17)
                    .l4Src(RangeMatch.exact(0, 16)).l4Dst(RangeMatch.exact(0, 16)).build(), RuleAction.toServer(0)));
        }
        classes.add(new TrafficClass(CLASSES, List.of("-"), -1, List.of(), false, "", "deny"));
        rules.add(OffloadRule.of(10, RuleMatch.builder().build(), RuleAction.drop()));
        if (name.startsWith("replies")) {
            // a chain with a reply ingress: replies to the NAPT address join the NAPT group (egress 1)
            classes.add(new TrafficClass(CLASSES + 1, List.of("udp dst host 10.9.9.9"), 1, List.of(), false, "napt",
                    "reply: restore by input 1 of the SynthRewriter of 'napt'; egress 1 (fw.out1)"));
            ids.add(CLASSES + 1);
            return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, ids, CLICK, "napt", false)),
                    rules, List.of(OffloadRule.of(5, RuleMatch.builder().ethType(0x0800).ipProto(17).build(),
                    RuleAction.toServer(CLASSES + 1))), List.of("fw.out0", "fw.out1"),
                    new SynthStats(CLASSES + 2, CLASSES + 2, rules.size() + 1, 0, Map.of()));
        }
        if (name.startsWith("answers")) {
            // replies told apart by source port: reply class CLASSES + 1 + c answers forward class c only, as the
            // synthesizer finds for a chain whose reply path classifies like its forward path
            List<OffloadRule> replyRules = new ArrayList<>();
            Map<Integer, List<Integer>> answers = new java.util.TreeMap<>();
            for (int c = 0; c < CLASSES; c++) {
                int r = CLASSES + 1 + c;
                classes.add(new TrafficClass(r, List.of("udp src port " + (1000 + c)), 1, List.of(), false, "napt",
                        "reply: restore by input 1 of the SynthRewriter of 'napt'; egress 1 (fw.out1)"));
                replyRules.add(OffloadRule.of(5, RuleMatch.builder().ethType(0x0800).ipProto(17)
                        .l4Src(RangeMatch.exact(1000 + c, 16)).build(), RuleAction.toServer(r)));
                answers.put(r, List.of(c));
                ids.add(r);
            }
            return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, ids, CLICK, "napt", false)),
                    rules, replyRules, List.of("fw.out0", "fw.out1"), new SynthStats(classes.size(), classes.size(),
                    rules.size() + replyRules.size(), 0, Map.of()), answers);
        }
        return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, ids, CLICK, "napt", false)), rules,
                List.of("fw.out0"), new SynthStats(CLASSES + 1, CLASSES + 1, rules.size(), 0, Map.of()));
    }

    /** Fails the next install on a device by throwing, as a controller that dies at that moment would stop. */
    static final class CrashingSwitches implements SwitchProgrammer {
        final TestSwitches real;
        volatile DeviceId crashOn;
        /** Installs on {@link #crashOn} that still succeed before the crash. */
        volatile int crashAfter;
        /** The install on {@link #crashOn} fails as a switch refusing a batch does, instead of crashing. */
        volatile boolean failInstead;
        /** Every removal fails, as on a switch whose master died with the previous owner. */
        volatile boolean refuseRemoves;

        CrashingSwitches(TestSwitches real) {
            this.real = real;
        }

        @Override
        public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
            if (device.equals(crashOn) && crashAfter-- <= 0) {
                crashOn = null;
                if (failInstead) {
                    return CompletableFuture.failedFuture(new IllegalStateException(device + " refused the batch"));
                }
                throw new IllegalStateException("controller crashed while programming " + device);
            }
            return real.install(device, rules);
        }

        @Override
        public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
            if (refuseRemoves) {
                return CompletableFuture.failedFuture(new IllegalStateException("no master for " + device));
            }
            return real.remove(device, rules);
        }

        @Override
        public Collection<org.onosproject.net.flow.FlowEntry> entries(DeviceId device) {
            return real.entries(device);
        }

        @Override
        public int ruleCount(DeviceId device) {
            return real.ruleCount(device);
        }
    }

    final class Rig {
        final TestSwitches switches = new TestSwitches();
        final CrashingSwitches crashing = new CrashingSwitches(switches);
        final LocalStoreFactory factory = new LocalStoreFactory();
        final ChainStore store = new ChainStore(factory, switches);
        final ScalingStore scaling = new ScalingStore(factory);
        final TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:real"),
                agent.client(), Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
        final Synthesis synthesis = (spec, profile) -> compiled(spec.name(), profile);
        final ChainManager manager;
        final ChainId chain;

        Rig(String name) {
            this(name, false);
        }

        Rig(String name, boolean autoScale) {
            this(name, autoScale, "mac");
        }

        Rig(String name, boolean autoScale, String tagType) {
            Duration t = Duration.ofSeconds(10);
            manager = new ChainManager(store, servers, switches, new SingleInstanceLeadership(),
                    new PlacementEngine(servers, Fixtures.network(0), switches, new Random(1), t),
                    new RulePlanner(Fixtures.APP, Fixtures.network(0)), new Deployer(switches, t), t, synthesis);
            chain = ChainId.of(name);
            String json = Fixtures.chainJson(name, tagType, 1, 1);
            if (autoScale) {
                json = json.replace("\"nics\": 1}", "\"nics\": 1, \"autoScale\": true}");
                assertTrue(json, json.contains("autoScale"));
            }
            assertEquals(ChainState.ACTIVE, manager.submit(json).state());
            rigs.add(this);
        }

        ScalingExecutor executor() {
            return new ScalingExecutor(store, scaling, servers, crashing, manager, Fixtures.APP,
                    Duration.ofSeconds(10), System::currentTimeMillis);
        }

        Placement placement() {
            return store.placements().get(chain).get().value();
        }

        GroupAssignment group(String id) {
            return placement().groups().stream().filter(g -> g.groupId().equals(id)).findFirst().get();
        }

        List<GroupStatus> agentGroups() throws Exception {
            return agent.client().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().stream()
                    .filter(p -> p.getPipelineId().equals(chain.name())).flatMap(p -> p.getGroupsList().stream())
                    .collect(Collectors.toList());
        }

        /** dst MAC each offload rule that sends a class to the server writes, by class. */
        Map<Integer, MacAddress> offloadTags() {
            Map<Integer, MacAddress> out = new java.util.TreeMap<>();
            for (FlowRule r : switches.rules(Fixtures.D1)) {
                for (Instruction i : r.treatment().allInstructions()) {
                    if (i instanceof ModEtherInstruction) {
                        MacAddress m = ((ModEtherInstruction) i).mac();
                        out.put((int) (m.toLong() & 0xffff), m);
                    }
                }
            }
            return out;
        }

        long transitRulesFor(Tag t) {
            return switches.rules(Fixtures.D2).stream().filter(r -> RuleRetagger.matchesGroup(r, t)).count();
        }

        void importFlow(String group, int srcPort, int mappedPort, boolean merge) throws Exception {
            agent.client().importState(ImportStateRequest.newBuilder().setSnapshot(StateSnapshot.newBuilder()
                    .setPipelineId(chain.name()).setGroupId(group).addTables(StateTable.newBuilder().setElement("rw")
                            .setKind("SynthRewriter").addEntries(NaptFlows.flow(srcPort, mappedPort)))).setMerge(merge).build())
                    .get(10, TimeUnit.SECONDS);
        }

        /** NAPT mappings of a group: source port → translated source port. */
        Map<Integer, Integer> flows(String group) throws Exception {
            Map<Integer, Integer> out = new java.util.TreeMap<>();
            for (StateTable t : agent.client().exportState(chain.name(), group).get(10, TimeUnit.SECONDS)
                    .getTablesList()) {
                for (FlowEntry e : t.getEntriesList()) {
                    if (e.getKey().getSrcIp().equals(NaptFlows.ip(10, 0, 0, 1))) {
                        out.put(e.getKey().getSrcPort(), e.getMapped().getSrcPort());
                    }
                }
            }
            return out;
        }
    }

    @After
    public void removeChains() throws Exception {
        for (Rig r : rigs) {
            if (r.manager.chain(r.chain).isPresent()) {
                r.manager.remove(r.chain);
            }
            assertTrue(r.agentGroups().isEmpty());
            assertEquals("every rule the chain ever installed is gone", 0, r.switches.total());
        }
    }

    @Test
    public void splitMovesHalfTheClassesToANewTagAndCoreWithTheFlowState() throws Exception {
        Rig rig = new Rig("split");
        GroupAssignment g0 = rig.group("g0");
        rig.importFlow("g0", 5000, 2000, false);
        rig.importFlow("g0", 5001, 2001, true);
        Map<Integer, Double> rates = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0);

        ScalingEvent e = rig.executor().split(rig.chain, "g0", rates, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals(List.of("g0", "g0.1"), e.groups());
        GroupAssignment keep = rig.group("g0");
        GroupAssignment moved = rig.group("g0.1");
        assertEquals(List.of(0, 3), keep.classIds());        // 510 vs 500 packets/s
        assertEquals(List.of(1, 2), moved.classIds());
        assertEquals(g0.tag(), keep.tag());
        assertEquals(g0.core(), keep.core());
        assertFalse(moved.core() == keep.core());
        assertFalse(moved.tag().equals(keep.tag()));
        assertEquals(2, rig.placement().cores().size());
        // the agent runs exactly that
        Map<String, GroupStatus> running = rig.agentGroups().stream()
                .collect(Collectors.toMap(GroupStatus::getGroupId, s -> s));
        assertEquals(Set.of("g0", "g0.1"), running.keySet());
        assertEquals(moved.core(), running.get("g0.1").getCore());
        assertEquals(moved.tag().group(), running.get("g0.1").getTag().getValue());
        assertEquals(List.of(1, 2), running.get("g0.1").getClassIdsList());
        // both halves hold the flows established before the split, translated the same way
        assertEquals(Map.of(5000, 2000, 5001, 2001), rig.flows("g0"));
        assertEquals(Map.of(5000, 2000, 5001, 2001), rig.flows("g0.1"));
        // the switch tags the moved classes with the new tag, the others as before; transit exists for both
        Map<Integer, MacAddress> tags = rig.offloadTags();
        assertEquals(keep.tag().classMac(0), tags.get(0));
        assertEquals(moved.tag().classMac(1), tags.get(1));
        assertEquals(moved.tag().classMac(2), tags.get(2));
        assertEquals(keep.tag().classMac(3), tags.get(3));
        assertEquals(1, rig.transitRulesFor(moved.tag()));
        assertEquals(1, rig.transitRulesFor(keep.tag()));
        // the store: tag claimed for the new group, rules recorded exactly as installed, journal empty
        assertTrue(rig.store.tags().snapshot().values().stream()
                .anyMatch(a -> a.tag().equals(moved.tag()) && a.groupId().equals("g0.1")));
        InstalledState inst = rig.store.installed().get(rig.chain).get().value();
        assertEquals(rig.switches.total(), inst.switchRules().size());
        for (InstalledRule r : inst.switchRules()) {
            assertTrue(r.toString(), rig.switches.rules(r.rule().deviceId()).stream()
                    .anyMatch(x -> x.exactMatch(r.rule())));
        }
        assertTrue(rig.scaling.inProgress().isEmpty());
        assertEquals(List.of(e), rig.scaling.history(rig.chain));
    }

    @Test
    public void mergeFoldsTheSplitHalfBackWithBothStates() throws Exception {
        Rig rig = new Rig("merge");
        rig.importFlow("g0", 5000, 2000, false);
        ScalingExecutor ex = rig.executor();
        ex.split(rig.chain, "g0", Map.of(), "test", System.currentTimeMillis());
        Tag retired = rig.group("g0.1").tag();
        int retiredCore = rig.group("g0.1").core();
        // a flow only the split-off half has seen
        rig.importFlow("g0.1", 6000, 3000, true);

        ScalingEvent e = ex.merge(rig.chain, "g0.1", "g0", "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals("the group holding the egress marker is kept", List.of("g0", "g0.1"), e.groups());
        assertEquals(1, rig.placement().groups().size());
        assertEquals(List.of(0, 1, 2, 3), rig.group("g0").classIds());
        assertEquals(List.of("g0"), rig.agentGroups().stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toList()));
        assertEquals(List.of(0, 1, 2, 3), rig.agentGroups().get(0).getClassIdsList());
        assertEquals(Map.of(5000, 2000, 6000, 3000), rig.flows("g0"));
        Tag kept = rig.group("g0").tag();
        rig.offloadTags().forEach((cls, mac) -> assertEquals(kept.classMac(cls), mac));
        assertEquals(0, rig.transitRulesFor(retired));
        assertFalse(rig.store.tags().snapshot().values().stream().anyMatch(a -> a.tag().equals(retired)));
        assertFalse(rig.placement().cores().contains(retiredCore));
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
        assertEquals(2, rig.scaling.history(rig.chain).size());
    }

    @Test
    public void aSwitchFailureRollsEverythingBack() throws Exception {
        Rig rig = new Rig("rollback");
        rig.importFlow("g0", 5000, 2000, false);
        Versioned<Placement> before = rig.store.placements().get(rig.chain).get();
        InstalledState installed = rig.store.installed().get(rig.chain).get().value();
        Map<Integer, MacAddress> tags = rig.offloadTags();
        int tagsHeld = rig.store.tags().snapshot().size();
        rig.switches.reject(Fixtures.D1);

        MetronException ex = assertThrows(MetronException.class,
                () -> rig.executor().split(rig.chain, "g0", Map.of(), "test", System.currentTimeMillis()));

        assertEquals(MetronException.Fault.SWITCH_FAILURE, ex.fault());
        assertTrue(ex.getMessage(), ex.getMessage().contains(Fixtures.S1) && ex.getMessage().contains("rolled back"));
        assertEquals(before.value(), rig.placement());
        assertEquals(installed, rig.store.installed().get(rig.chain).get().value());
        assertEquals(tagsHeld, rig.store.tags().snapshot().size());
        assertEquals(tags, rig.offloadTags());
        List<GroupStatus> running = rig.agentGroups();
        assertEquals(1, running.size());
        assertEquals(List.of(0, 1, 2, 3), running.get(0).getClassIdsList());
        assertEquals(Map.of(5000, 2000), rig.flows("g0"));
        assertTrue(rig.scaling.inProgress().isEmpty());
        assertEquals(ScalingEvent.Outcome.ROLLED_BACK, rig.scaling.history(rig.chain).get(0).outcome());
    }

    @Test
    public void aRestartedControllerCompletesASplitThatReachedTheReTag() throws Exception {
        Rig rig = new Rig("recover");
        rig.importFlow("g0", 5000, 2000, false);
        rig.crashing.crashOn = Fixtures.D1;
        assertThrows(IllegalStateException.class,
                () -> rig.executor().split(rig.chain, "g0", Map.of(), "test", System.currentTimeMillis()));
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());
        assertEquals("the switch was never re-tagged", 1, rig.offloadTags().values().stream()
                .map(m -> m.toLong() >>> 16).distinct().count());

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(1, recovered.size());
        assertEquals(ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        assertTrue(rig.scaling.inProgress().isEmpty());
        Tag moved = rig.group("g0.1").tag();
        rig.group("g0.1").classIds().forEach(c -> assertEquals(moved.classMac(c), rig.offloadTags().get(c)));
        assertEquals(Set.of("g0", "g0.1"), rig.agentGroups().stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toSet()));
        assertEquals(Map.of(5000, 2000), rig.flows("g0.1"));
    }

    @Test
    public void anUnfinishedSplitIsLeftToTheChainsOwnerAndDroppedOnceTheChainIsDeleted() throws Exception {
        Rig rig = new Rig("owned");
        rig.crashing.crashOn = Fixtures.D1;
        assertThrows(IllegalStateException.class,
                () -> rig.executor().split(rig.chain, "g0", Map.of(), "test", System.currentTimeMillis()));
        ScalingOperation op = rig.scaling.inProgress().iterator().next();

        // another instance owns the chain: it finishes the split, this one touches nothing
        assertTrue(rig.executor().recover(c -> false).isEmpty());
        assertEquals(op.toString(), rig.scaling.inProgress().iterator().next().toString());

        // the chain was deleted meanwhile: its journal entry goes, and recovery carries on with the others
        org.metron.app.api.Chain chain = rig.store.chains().remove(rig.chain).orElseThrow();
        assertTrue(rig.executor().recover(c -> true).isEmpty());
        assertTrue(rig.scaling.inProgress().isEmpty());
        rig.store.chains().put(rig.chain, chain); // for removeChains, which takes off what is left
    }

    /** The agent's load report as the monitor receives it: cumulative counters after {@code step} intervals. */
    private static Stats report(Placement p, long step, double load, Map<Integer, Long> ratePerClass,
                                Map<String, long[]> acc) {
        return report(p, step, load, ratePerClass, acc, Map.of());
    }

    /**
     * @param sportPerClass per class, per interval: its TCP/UDP packets, then per source-port bit how many had it
     *                      set (ClassStats.l4_packets, sport_ones)
     */
    private static Stats report(Placement p, long step, double load, Map<Integer, Long> ratePerClass,
                                Map<String, long[]> acc, Map<Integer, long[]> sportPerClass) {
        long cycles = 100_000_000L;
        Stats.Builder s = Stats.newBuilder().setTimestampNs(step * 100_000_000L);
        for (int core : p.cores()) {
            s.addCores(CoreStats.newBuilder().setCore(core).setTotalCycles(step * cycles));
        }
        for (GroupAssignment g : p.groups()) {
            long[] a = acc.computeIfAbsent(g.groupId(), k -> new long[1]);
            a[0] += (long) (load * cycles);
            GroupStats.Builder gs = GroupStats.newBuilder().setPipelineId(p.chainId().name())
                    .setGroupId(g.groupId()).setCore(g.core()).setBusyCycles(a[0]);
            for (int c : g.classIds()) {
                ClassStats.Builder cs = ClassStats.newBuilder().setClassId(c).setPackets(step * ratePerClass.get(c));
                long[] bits = sportPerClass.get(c);
                if (bits != null) {
                    cs.setL4Packets(step * bits[0]);
                    for (int k = 0; k < 16; k++) {
                        cs.addSportOnes(step * bits[1 + k]);
                    }
                }
                gs.addClasses(cs);
            }
            s.addGroups(gs);
        }
        return s.build();
    }

    private static void await(BooleanSupplier cond, java.util.function.Supplier<String> what)
            throws InterruptedException {
        long end = System.currentTimeMillis() + 20_000;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                throw new AssertionError("timed out waiting for " + what.get());
            }
            Thread.sleep(20);
        }
    }

    @Test
    public void aSplitChainComesBackSplitWhenItsAgentLostItsPipeline() throws Exception {
        Rig rig = new Rig("restore");
        rig.importFlow("g0", 5000, 2000, false);
        ScalingEvent e = rig.executor().split(rig.chain, "g0", Map.of(0, 4.0, 1, 3.0, 2, 2.0, 3, 1.0), "test",
                System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        Placement split = rig.placement();
        assertEquals(2, split.groups().size());
        // the agent restarted: it runs nothing of the chain any more
        agent.client().removePipeline(rig.chain.name()).get(10, TimeUnit.SECONDS);
        assertTrue(rig.agentGroups().isEmpty());

        MetronServer server = rig.servers.server(split.server().get()).get();
        assertEquals(List.of(rig.chain), new ServerRecovery(rig.store, rig.manager, Duration.ofSeconds(10)).restore(server));

        // back as placed: both halves, with their tags, cores and classes (not the chain as compiled)
        Map<String, GroupStatus> running = rig.agentGroups().stream()
                .collect(Collectors.toMap(GroupStatus::getGroupId, x -> x));
        assertEquals(Set.of("g0", "g0.1"), running.keySet());
        for (GroupAssignment g : split.groups()) {
            GroupStatus st = running.get(g.groupId());
            assertEquals(g.groupId(), g.core(), st.getCore());
            assertEquals(g.groupId(), g.tag().group(), st.getTag().getValue());
            assertEquals(g.groupId(), g.classIds(), st.getClassIdsList());
        }
        assertEquals("the placement is untouched", split, rig.placement());
    }

    @Test
    public void resourcesReadInTheBackgroundServeOnlyWhileFresh() throws Exception {
        Rig rig = new Rig("resources");
        AtomicLong now = new AtomicLong(1_000);
        ResourceCache cache = new ResourceCache(now::get);
        MetronServer server = rig.servers.server(rig.placement().server().get()).get();
        assertTrue("nothing read yet", cache.fresh(server.id()).isEmpty());
        cache.refresh(server);
        await(() -> cache.fresh(server.id()).isPresent(), () -> "the agent's resources");
        assertEquals(agent.client().getResources().get(10, TimeUnit.SECONDS).getCoresList(),
                cache.fresh(server.id()).get().getCoresList());
        now.addAndGet(ResourceCache.MAX_AGE_MS);
        assertTrue(cache.fresh(server.id()).isPresent());
        now.incrementAndGet();
        assertTrue("too old: the split asks the agent", cache.fresh(server.id()).isEmpty());
    }

    /**
     * A registry that cannot list the servers once (in ONOS: a server device whose driver is not bound on this node
     * yet) must not stop the monitor: the next round subscribes and the chain is measured. Failed before: the
     * exception cancelled the periodic subscription for good (measured on a node of the 3-node cluster test).
     */
    @Test
    public void aFailedSubscriptionRoundIsRetriedAndTheChainIsMeasured() throws Exception {
        Rig rig = new Rig("resubscribe");
        AtomicInteger asked = new AtomicInteger();
        ServerRegistry failingOnce = new ServerRegistry() {
            @Override
            public java.util.Collection<MetronServer> servers() {
                if (asked.getAndIncrement() == 0) {
                    throw new IllegalStateException("driver not bound yet");
                }
                return rig.servers.servers();
            }

            @Override
            public Optional<MetronServer> server(DeviceId id) {
                return rig.servers.server(id);
            }
        };
        try (LoadMonitor monitor = new LoadMonitor(rig.store, failingOnce,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), System::currentTimeMillis, 100,
                new SingleInstanceLeadership())) {
            monitor.start();
            await(() -> monitor.latest(rig.chain).isPresent(), () -> "a measurement after " + asked.get()
                    + " subscription rounds");
            assertTrue(asked.get() >= 2);
        }
    }

    @Test
    public void aFlaggedServerIsSampledAtOnceButNotRightAfterAReport() throws Exception {
        Rig rig = new Rig("sample");
        AtomicLong now = new AtomicLong(1_000_000);
        DeviceId server = rig.placement().server().get();
        try (LoadMonitor monitor = new LoadMonitor(rig.store, rig.servers,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), now::get, 100,
                new SingleInstanceLeadership())) {
            monitor.sampleNow(server);
            Thread.sleep(300);
            assertTrue("no report to measure against yet", monitor.latest(rig.chain).isEmpty());
            monitor.onReport(server, agent.client().getStats("").get(10, TimeUnit.SECONDS));
            monitor.sampleNow(server);
            Thread.sleep(300);
            assertTrue("the last report is too recent", monitor.latest(rig.chain).isEmpty());
            now.addAndGet(50);
            monitor.sampleNow(server);
            await(() -> monitor.latest(rig.chain).isPresent(), () -> "a measurement from the on-demand sample");
            assertEquals(List.of("g0"), monitor.latest(rig.chain).get().groups().stream().map(GroupLoad::groupId)
                    .collect(Collectors.toList()));
        }
    }

    @Test
    public void theMonitorSplitsASaturatedGroupAndMergesTheIdleHalvesBack() throws Exception {
        Rig rig = new Rig("monitor", true);
        AtomicLong now = new AtomicLong(1_000_000);
        DeviceId server = rig.placement().server().get();
        Map<Integer, Long> rates = Map.of(0, 40L, 1, 30L, 2, 20L, 3, 10L);  // packets per 100 ms interval
        Map<String, long[]> busy = new java.util.HashMap<>();
        try (LoadMonitor monitor = new LoadMonitor(rig.store, rig.servers,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), now::get, 100,
                new SingleInstanceLeadership())) {
            long step = 1;
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy));
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy));
            assertEquals(0.2, monitor.latest(rig.chain).get().groups().get(0).load(), 1e-9);
            assertEquals(400.0, monitor.latest(rig.chain).get().groups().get(0).classRates().get(0), 1e-9);
            // the first overloaded report splits
            now.addAndGet(100);
            monitor.onReport(server, report(rig.placement(), step++, 0.97, rates, busy));
            await(() -> rig.placement().groups().size() == 2, () -> "the split: " + rig.scaling.history(rig.chain));
            await(() -> rig.scaling.history(rig.chain).size() == 1, () -> "the split's history entry");
            ScalingEvent split = rig.scaling.history(rig.chain).get(0);
            assertEquals(split.detail(), ScalingEvent.Outcome.DONE, split.outcome());
            assertEquals("balanced by the measured class rates (400+100 vs 300+200)", List.of(1, 2), split.moved());
            assertEquals(2, rig.agentGroups().size());
            // idle: no merge while the cores cool down, then after 2 s idle
            busy.clear();
            monitor.onReport(server, report(rig.placement(), step++, 0.05, rates, busy));
            for (int i = 0; i < 40 && rig.placement().groups().size() == 2; i++) {
                now.addAndGet(100);
                monitor.onReport(server, report(rig.placement(), step++, 0.05, rates, busy));
                Thread.sleep(5);
            }
            await(() -> rig.placement().groups().size() == 1, () -> "the merge: " + rig.scaling.history(rig.chain));
            await(() -> rig.scaling.history(rig.chain).size() == 2, () -> "the merge's history entry");
            ScalingEvent merge = rig.scaling.history(rig.chain).get(1);
            assertEquals(ScalingDecision.Kind.MERGE, merge.kind());
            assertEquals(merge.detail(), ScalingEvent.Outcome.DONE, merge.outcome());
            assertTrue(merge.reason(), merge.reason().contains("for 2000 ms"));
            assertEquals(1, rig.agentGroups().size());
        }
    }

    @Test
    public void theMonitorDividesAClassCarryingMostOfTheLoadByItsMeasuredBitAndJoinsItBack() throws Exception {
        Rig rig = new Rig("slices-monitor", true);
        AtomicLong now = new AtomicLong(1_000_000);
        DeviceId server = rig.placement().server().get();
        Map<Integer, Long> rates = Map.of(0, 90L, 1, 4L, 2, 3L, 3, 3L);  // class 0 carries 90 %
        // class 0's source ports: bit 0 set in half its packets, bit 1 in a ninth, the others never
        long[] bits = new long[17];
        bits[0] = 90;
        bits[1] = 45;
        bits[2] = 10;
        Map<Integer, long[]> sport = Map.of(0, bits);
        Map<String, long[]> busy = new java.util.HashMap<>();
        try (LoadMonitor monitor = new LoadMonitor(rig.store, rig.servers,
                new ScalingPolicy(ScalingPolicy.Params.DEFAULT), rig.executor(), now::get, 100,
                new SingleInstanceLeadership())) {
            long step = 1;
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy, sport));
            monitor.onReport(server, report(rig.placement(), step++, 0.2, rates, busy, sport));
            ClassBits measured = monitor.latest(rig.chain).get().groups().get(0).classBits().get(0);
            assertEquals(0.5, measured.share(0), 1e-9);
            now.addAndGet(100);
            monitor.onReport(server, report(rig.placement(), step++, 0.97, rates, busy, sport));
            await(() -> rig.scaling.history(rig.chain).size() == 1, () -> "the split's history entry");
            ScalingEvent split = rig.scaling.history(rig.chain).get(0);
            assertEquals(split.detail(), ScalingEvent.Outcome.DONE, split.outcome());
            assertEquals(List.of(0), split.moved());
            assertTrue(split.slice(), split.slice().contains("class 0 divided by source-port bit 0"));
            assertTrue(split.reason(), split.reason().contains("50% of its packets have it set; whole classes:"
                    + " larger half 90%"));
            assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(1, 1)), rig.group("g0.1").slices());
            // idle: the two halves of class 0 join back after 2 s
            busy.clear();
            for (int i = 0; i < 40 && rig.placement().groups().size() == 2; i++) {
                now.addAndGet(100);
                monitor.onReport(server, report(rig.placement(), step++, 0.05, rates, busy, sport));
                Thread.sleep(5);
            }
            await(() -> rig.scaling.history(rig.chain).size() == 2, () -> "the merge's history entry");
            ScalingEvent merge = rig.scaling.history(rig.chain).get(1);
            assertEquals(merge.detail(), ScalingEvent.Outcome.DONE, merge.outcome());
            assertTrue(merge.slice(), merge.slice().contains("class 0 joined over source-port bit 0"));
            assertEquals(1, rig.placement().groups().size());
            assertTrue(rig.group("g0").slices().isEmpty());
        }
    }

    @Test
    public void aReplyClassAnsweringEveryClassKeepsTheGroupWholeAndTheHistorySaysWhy() throws Exception {
        // the "replies" chain: reply class 5 answers all four forward classes (its filter tells no flow apart)
        Rig rig = new Rig("replies");
        Placement before = rig.placement();
        int rules = rig.switches.total();
        assertEquals(List.of(List.of(0, 1, 2, 3, 5)), rig.executor().replies(rig.chain).units(List.of(0, 1, 2, 3, 5)));
        MetronException e = assertThrows(MetronException.class,
                () -> rig.executor().split(rig.chain, "g0", Map.of(), "test", 0));
        assertTrue(e.getMessage(), e.getMessage().contains("reply class 5 answers forward classes [0, 1, 2, 3]"));
        ScalingEvent ev = rig.scaling.history(rig.chain).get(0);
        assertEquals(ScalingEvent.Outcome.FAILED, ev.outcome());
        assertEquals(e.getMessage(), ev.detail());
        assertEquals(before, rig.placement());
        assertEquals(rules, rig.switches.total());
        assertEquals(1, rig.agentGroups().size());
    }

    /** dst MAC of the reply rules that send a reply class to the server, by class. */
    private static Map<Integer, MacAddress> replyTags(Rig rig) {
        Map<Integer, MacAddress> out = new java.util.TreeMap<>();
        rig.store.installed().get(rig.chain).get().value().switchRules().stream()
                .filter(r -> r.role() == Role.REPLY).forEach(r -> {
                    FlowRule installed = rig.switches.rules(r.rule().deviceId()).stream()
                            .filter(x -> x.id().equals(r.rule().id())).findFirst().orElseThrow();
                    for (Instruction i : installed.treatment().allInstructions()) {
                        if (i instanceof ModEtherInstruction) {
                            MacAddress m = ((ModEtherInstruction) i).mac();
                            out.put((int) (m.toLong() & 0xffff), m);
                        }
                    }
                });
        return out;
    }

    @Test
    public void replyClassesSplitAndMergeWithTheForwardClassesTheyAnswer() throws Exception {
        Rig rig = new Rig("answers");
        rig.importFlow("g0", 5000, 2000, false);
        Tag original = rig.group("g0").tag();
        assertEquals(Set.of(5, 6, 7, 8), replyTags(rig).keySet());
        Map<Integer, Double> rates = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0, 5, 500.0, 6, 300.0, 7, 200.0,
                8, 10.0);
        ScalingExecutor ex = rig.executor();

        ScalingEvent split = ex.split(rig.chain, "g0", rates, "test", System.currentTimeMillis());

        assertEquals(split.detail(), ScalingEvent.Outcome.DONE, split.outcome());
        assertTrue(split.detail(), split.steps().contains("replies"));
        GroupAssignment keep = rig.group("g0");
        GroupAssignment moved = rig.group("g0.1");
        assertEquals("each forward class with the reply class answering it (1000+20 vs 600+400 packets/s)",
                List.of(0, 3, 5, 8), keep.classIds());
        assertEquals(List.of(1, 2, 6, 7), moved.classIds());
        Map<Integer, MacAddress> replies = replyTags(rig);
        for (int c : keep.classIds()) {
            assertEquals(keep.tag().classMac(c), c > CLASSES ? replies.get(c) : rig.offloadTags().get(c));
        }
        for (int c : moved.classIds()) {
            assertEquals(moved.tag().classMac(c), c > CLASSES ? replies.get(c) : rig.offloadTags().get(c));
        }
        assertEquals(Map.of(5000, 2000), rig.flows("g0.1"));
        assertEquals(List.of(1, 2, 6, 7), rig.agentGroups().stream().filter(g -> g.getGroupId().equals("g0.1"))
                .findFirst().get().getClassIdsList());
        InstalledState inst = rig.store.installed().get(rig.chain).get().value();
        assertEquals(rig.switches.total(), inst.switchRules().size());
        for (InstalledRule r : inst.switchRules()) {
            assertTrue(r.toString(), rig.switches.rules(r.rule().deviceId()).stream()
                    .anyMatch(x -> x.exactMatch(r.rule())));
        }

        ScalingEvent merge = ex.merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());

        assertEquals(merge.detail(), ScalingEvent.Outcome.DONE, merge.outcome());
        assertEquals(List.of(0, 1, 2, 3, 5, 6, 7, 8), rig.group("g0").classIds());
        replyTags(rig).forEach((c, mac) -> assertEquals(original.classMac(c), mac));
        rig.offloadTags().forEach((c, mac) -> assertEquals(original.classMac(c), mac));
        assertEquals(0, rig.transitRulesFor(moved.tag()));
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
    }

    @Test
    public void aRestartedControllerReTagsTheRepliesOfASplitThatReTaggedOnlyItsForwardClasses() throws Exception {
        Rig rig = new Rig("answers-recover");
        rig.importFlow("g0", 5000, 2000, false);
        Tag original = rig.group("g0").tag();
        // the reply rules sit on the offload device here (egress point s1/3): its second batch is theirs
        rig.crashing.crashOn = Fixtures.D1;
        rig.crashing.crashAfter = 1;
        assertThrows(IllegalStateException.class, () -> rig.executor().split(rig.chain, "g0",
                Map.of(0, 9.0, 5, 9.0), "test", System.currentTimeMillis()));
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());
        Tag moved = rig.group("g0.1").tag();
        rig.group("g0.1").classIds().stream().filter(c -> c < CLASSES)
                .forEach(c -> assertEquals(moved.classMac(c), rig.offloadTags().get(c)));
        long group = original.classMac(0).toLong() >>> 16;
        assertTrue("the replies were not re-tagged yet",
                replyTags(rig).values().stream().allMatch(m -> m.toLong() >>> 16 == group));

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(1, recovered.size());
        assertEquals(recovered.get(0).detail(), ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        Map<Integer, MacAddress> replies = replyTags(rig);
        rig.group("g0.1").classIds().stream().filter(c -> c > CLASSES)
                .forEach(c -> assertEquals(moved.classMac(c), replies.get(c)));
        rig.group("g0").classIds().stream().filter(c -> c > CLASSES)
                .forEach(c -> assertEquals(original.classMac(c), replies.get(c)));
        assertEquals(Map.of(5000, 2000), rig.flows("g0.1"));
        assertTrue(rig.scaling.inProgress().isEmpty());
    }

    @Test
    public void replyRulesFollowASplitAndAMergeWithVlanTags() throws Exception {
        Rig rig = new Rig("answers-vlan", false, "vlan");
        Tag original = rig.group("g0").tag();
        ScalingExecutor ex = rig.executor();
        ScalingEvent split = ex.split(rig.chain, "g0", Map.of(1, 50.0, 6, 50.0), "test", System.currentTimeMillis());
        assertEquals(split.detail(), ScalingEvent.Outcome.DONE, split.outcome());
        Tag moved = rig.group("g0.1").tag();
        assertEquals(List.of(1, 6), rig.group("g0.1").classIds());
        Map<Integer, Short> vlans = replyVlans(rig);
        assertEquals(Set.of(5, 6, 7, 8), vlans.keySet());
        vlans.forEach((c, v) -> assertEquals("class " + c, c == 6 ? moved.group() : original.group(), (int) v));

        assertEquals(ScalingEvent.Outcome.DONE, ex.merge(rig.chain, "g0", "g0.1", "test", 0).outcome());
        replyVlans(rig).forEach((c, v) -> assertEquals("class " + c, original.group(), (int) v));
    }

    /** VLAN id the reply rules that send a reply class to the server push, by class. */
    private static Map<Integer, Short> replyVlans(Rig rig) {
        Map<Integer, Short> out = new java.util.TreeMap<>();
        rig.store.installed().get(rig.chain).get().value().switchRules().stream()
                .filter(r -> r.role() == Role.REPLY).forEach(r -> {
                    FlowRule installed = rig.switches.rules(r.rule().deviceId()).stream()
                            .filter(x -> x.id().equals(r.rule().id())).findFirst().orElseThrow();
                    Integer cls = null;
                    Short vlan = null;
                    for (Instruction i : installed.treatment().allInstructions()) {
                        if (i instanceof ModEtherInstruction) {
                            cls = (int) (((ModEtherInstruction) i).mac().toLong() & 0xffff);
                        } else if (i instanceof ModVlanIdInstruction) {
                            vlan = ((ModVlanIdInstruction) i).vlanId().toShort();
                        }
                    }
                    if (cls != null && vlan != null) {
                        out.put(cls, vlan);
                    }
                });
        return out;
    }

    @Test
    public void aRestartedControllerReTagsTheRepliesOfAMergeThatReTaggedOnlyItsForwardClasses() throws Exception {
        Rig rig = new Rig("answers-merge");
        Tag kept = rig.group("g0").tag();
        ScalingExecutor ex = rig.executor();
        assertEquals(ScalingEvent.Outcome.DONE, ex.split(rig.chain, "g0", Map.of(2, 9.0, 7, 9.0), "test", 0)
                .outcome());
        Tag retired = rig.group("g0.1").tag();
        rig.crashing.crashOn = Fixtures.D1;
        rig.crashing.crashAfter = 1;
        assertThrows(IllegalStateException.class, () -> ex.merge(rig.chain, "g0", "g0.1", "test", 0));
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());
        assertTrue("forward re-tagged, replies not yet", replyTags(rig).values().stream()
                .anyMatch(m -> m.toLong() >>> 16 == retired.classMac(0).toLong() >>> 16));

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(recovered.get(0).detail(), ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        replyTags(rig).forEach((c, mac) -> assertEquals(kept.classMac(c), mac));
        rig.offloadTags().forEach((c, mac) -> assertEquals(kept.classMac(c), mac));
        assertEquals(List.of("g0"), rig.agentGroups().stream().map(GroupStatus::getGroupId)
                .collect(Collectors.toList()));
        assertEquals(0, rig.transitRulesFor(retired));
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
    }

    @Test
    public void aRefusedReplyBatchLeavesTheSplitDoneAndTheStoreTruthful() throws Exception {
        Rig rig = new Rig("answers-refused");
        Tag original = rig.group("g0").tag();
        rig.crashing.crashOn = Fixtures.D1;
        rig.crashing.crashAfter = 1;
        rig.crashing.failInstead = true;

        ScalingEvent e = rig.executor().split(rig.chain, "g0", Map.of(0, 9.0, 5, 9.0), "test", 0);

        // the forward batch moved traffic: the split is done, with the reply batch listed as its problem
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.detail(), e.detail().contains("reply rules of classes") && e.detail().contains("refused"));
        Tag moved = rig.group("g0.1").tag();
        rig.group("g0.1").classIds().stream().filter(c -> c < CLASSES)
                .forEach(c -> assertEquals(moved.classMac(c), rig.offloadTags().get(c)));
        replyTags(rig).forEach((c, mac) -> assertEquals(original.classMac(c), mac));
        InstalledState inst = rig.store.installed().get(rig.chain).get().value();
        for (InstalledRule r : inst.switchRules()) {
            assertTrue(r.toString(), rig.switches.rules(r.rule().deviceId()).stream()
                    .anyMatch(x -> x.exactMatch(r.rule())));
        }
        assertTrue(rig.scaling.inProgress().isEmpty());
    }

    @Test
    public void refusalsNameTheReasonAndChangeNothing() throws Exception {
        Rig rig = new Rig("refuse");
        Placement before = rig.placement();
        MetronException e = assertThrows(MetronException.class,
                () -> rig.executor().split(rig.chain, "g7", Map.of(), "test", 0));
        assertTrue(e.getMessage(), e.getMessage().contains("no group 'g7'"));
        e = assertThrows(MetronException.class,
                () -> rig.executor().split(ChainId.of("nope"), "g0", Map.of(), "test", 0));
        assertEquals(MetronException.Fault.UNKNOWN_CHAIN, e.fault());
        e = assertThrows(MetronException.class, () -> rig.executor().merge(rig.chain, "g0", "g0", "test", 0));
        assertTrue(e.getMessage(), e.getMessage().contains("with itself"));
        assertEquals(before, rig.placement());
        assertEquals(1, rig.agentGroups().size());
    }

    /** The offload rules on the offload device that tag class {@code cls}, with the MAC they write. */
    private static Map<FlowRule, MacAddress> classRules(Rig rig, int cls) {
        Map<FlowRule, MacAddress> out = new java.util.LinkedHashMap<>();
        for (FlowRule r : rig.switches.rules(Fixtures.D1)) {
            for (Instruction i : r.treatment().allInstructions()) {
                if (i instanceof ModEtherInstruction && (((ModEtherInstruction) i).mac().toLong() & 0xffff) == cls) {
                    out.put(r, ((ModEtherInstruction) i).mac());
                }
            }
        }
        return out;
    }

    /** The (mask, value) of a rule's UDP source-port match; null without one. */
    private static List<Integer> sport(FlowRule r) {
        for (org.onosproject.net.flow.criteria.Criterion c : r.selector().criteria()) {
            if (c instanceof org.onosproject.net.flow.criteria.UdpPortCriterion
                    && c.type().name().startsWith("UDP_SRC")) {
                org.onosproject.net.flow.criteria.UdpPortCriterion u =
                        (org.onosproject.net.flow.criteria.UdpPortCriterion) c;
                return List.of(u.mask() == null ? 0xffff : u.mask().toInt(), u.udpPort().toInt());
            }
        }
        return null;
    }

    @Test
    public void aClassIsDividedBySourcePortBitsWithItsRulesAndFlowsAndJoinedBackWhole() throws Exception {
        Rig rig = new Rig("slices");
        ScalingExecutor ex = rig.executor();
        Map<FlowRule, MacAddress> original = classRules(rig, 0);
        assertEquals(2, original.size());
        FlowRule whole = original.keySet().stream().filter(r -> sport(r) == null).findFirst().orElseThrow();
        FlowRule portZero = original.keySet().stream().filter(r -> sport(r) != null).findFirst().orElseThrow();
        Tag g0tag = rig.group("g0").tag();
        // flows from even and odd source ports (bit 0 clear / set) and with bit 1 set or clear
        rig.importFlow("g0", 5000, 2000, false);
        rig.importFlow("g0", 5001, 2001, true);
        rig.importFlow("g0", 5002, 2002, true);
        rig.importFlow("g0", 5003, 2003, true);

        ScalingEvent e = ex.splitClass(rig.chain, "g0", 0, 0, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals(List.of(0), e.moved());
        assertTrue(e.slice(), e.slice().contains("class 0 divided by source-port bit 0"));
        assertTrue(MetronText.moved(e), MetronText.moved(e).contains("g0.1 takes sport&0x0001=0x0001"));
        GroupAssignment keep = rig.group("g0");
        GroupAssignment half = rig.group("g0.1");
        assertEquals(List.of(0, 1, 2, 3), keep.classIds());
        assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(1, 0)), keep.slices());
        assertEquals(List.of(0), half.classIds());
        assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(1, 1)), half.slices());
        assertFalse(half.core() == keep.core());
        // the class's rule became two disjoint halves at its priority, each tagging for its group; the rule for
        // source port 0 (bit 0 clear) stays as it was, with the kept group
        Map<FlowRule, MacAddress> halves = classRules(rig, 0);
        assertEquals(3, halves.size());
        assertEquals(g0tag.classMac(0), halves.get(portZero));
        halves.remove(portZero);
        for (Map.Entry<FlowRule, MacAddress> r : halves.entrySet()) {
            assertEquals(whole.priority(), r.getKey().priority());
            List<Integer> bits = sport(r.getKey());
            assertEquals(1, (int) bits.get(0));
            assertEquals(bits.get(1) == 1 ? half.tag().classMac(0) : g0tag.classMac(0), r.getValue());
        }
        assertEquals(g0tag.classMac(1), rig.offloadTags().get(1));
        // the new half took the flows of its slice only; the kept half keeps every flow (it adopted the table)
        assertEquals(Map.of(5001, 2001, 5003, 2003), rig.flows("g0.1"));
        assertEquals(Map.of(5000, 2000, 5001, 2001, 5002, 2002, 5003, 2003), rig.flows("g0"));
        InstalledState inst = rig.store.installed().get(rig.chain).get().value();
        assertEquals(rig.switches.total(), inst.switchRules().size());
        for (InstalledRule r : inst.switchRules()) {
            assertTrue(r.toString(), rig.switches.rules(r.rule().deviceId()).stream()
                    .anyMatch(x -> x.exactMatch(r.rule())));
        }

        // the same slice cannot be divided by the same bit again; the history says why
        MetronException refused = assertThrows(MetronException.class,
                () -> ex.splitClass(rig.chain, "g0.1", 0, 0, "test", System.currentTimeMillis()));
        assertTrue(refused.getMessage(), refused.getMessage().contains("cannot be divided by source-port bit 0"));

        // the new half divided again by bit 1: three groups, class 0 in three slices
        e = ex.splitClass(rig.chain, "g0.1", 0, 1, "test", System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        GroupAssignment quarter = rig.group("g0.2");
        assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(3, 3)), quarter.slices());
        assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(3, 1)), rig.group("g0.1").slices());
        assertEquals(4, classRules(rig, 0).size());
        assertEquals(Map.of(5003, 2003), rig.flows("g0.2"));
        assertEquals(3, rig.placement().cores().size());
        // g0 and g0.2 hold no two halves of one slice: they do not merge
        refused = assertThrows(MetronException.class,
                () -> ex.merge(rig.chain, "g0", "g0.2", "test", System.currentTimeMillis()));
        assertTrue(refused.getMessage(), refused.getMessage().contains("not the two halves of one slice"));

        // joined back in reverse: a flow only the quarter saw survives both merges
        rig.importFlow("g0.2", 7003, 3003, true);
        e = ex.merge(rig.chain, "g0.1", "g0.2", "test", System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.slice(), e.slice().contains("class 0 joined over source-port bit 1"));
        assertEquals(Map.of(0, new org.metron.app.api.ClassSlice(1, 1)), rig.group("g0.1").slices());
        assertEquals(3, classRules(rig, 0).size());
        e = ex.merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals(1, rig.placement().groups().size());
        assertTrue(rig.group("g0").slices().isEmpty());
        // the class's rule is the original one again: same match, priority and id, tagging for g0
        Map<FlowRule, MacAddress> back = classRules(rig, 0);
        assertEquals(2, back.size());
        assertEquals(g0tag.classMac(0), back.get(portZero));
        FlowRule r = back.keySet().stream().filter(x -> sport(x) == null).findFirst().orElseThrow();
        assertEquals(whole.id(), r.id());
        assertTrue(r.exactMatch(whole));
        assertEquals(g0tag.classMac(0), back.get(r));
        assertEquals(Map.of(5000, 2000, 5001, 2001, 5002, 2002, 5003, 2003, 7003, 3003), rig.flows("g0"));
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
        assertEquals(List.of(0, 1, 2, 3), rig.agentGroups().get(0).getClassIdsList());
    }
}
