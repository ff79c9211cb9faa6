package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingExecutor;
import org.metron.app.scaling.ScalingStore;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.FailoverBackup;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/**
 * Failover from precomputed backups (paper: backup configurations): after a chain is deployed, the store holds,
 * per device carrying its switch rules, where the chain goes when that device fails; a failure is then handled by
 * that lookup, with exactly the rules a recomputation would install, and a backup computed for another placement
 * is never used.
 */
public class FailoverBackupTest {
    private static final ChainId ID = ChainId.of("r");
    private static final DeviceId S3 = DeviceId.deviceId(TwoPathWorld.S3);

    private static TwoPathWorld deployed() {
        TwoPathWorld w = new TwoPathWorld();
        assertEquals(ChainState.ACTIVE, w.manager.submit(TwoPathWorld.json("r")).state());
        w.manager.awaitBackups();
        return w;
    }

    private static BackupConfiguration backups(TwoPathWorld w) {
        return w.store.backups().get(ID).get().value();
    }

    /** The switches' tables as entries: device, priority, match and actions. */
    private static Set<String> tables(TwoPathWorld w) {
        return List.of(Fixtures.D1, Fixtures.D2, S3, DeviceId.deviceId(TwoPathWorld.S4)).stream()
                .flatMap(d -> w.switches.rules(d).stream())
                .map(r -> r.deviceId() + " " + r.priority() + " " + r.selector() + " " + r.treatment())
                .collect(Collectors.toSet());
    }

    @Test
    public void theStoreHoldsABackupForTheOffloadSwitchFailing() {
        TwoPathWorld w = deployed();
        assertEquals(Fixtures.D2, w.manager.placement(ID).get().offloadDevice().get());
        FailoverBackup b = backups(w).failover(Fixtures.D2).orElseThrow();
        assertEquals(w.manager.placement(ID).get(), b.basis());
        assertEquals(S3, b.moved().offloadDevice().get());
        assertTrue("no rule of the backup is on the failed switch",
                   b.switchRules().stream().noneMatch(r -> r.rule().deviceId().equals(Fixtures.D2)));
        assertFalse("s1, the ingress device, has no backup: nothing routes around it",
                    backups(w).failover(Fixtures.D1).isPresent());
    }

    /**
     * s2 fails in two worlds holding the same chain: one has its backups, the other's are dropped, so its reroute
     * computes. Both move the offload to s3, the first by the lookup; both install the same tables.
     */
    private static void failS2(TwoPathWorld fromBackup, TwoPathWorld recomputed) {
        recomputed.store.backups().put(ID, backups(recomputed).withFailovers(Map.of()));
        for (TwoPathWorld w : List.of(fromBackup, recomputed)) {
            w.net.down(Fixtures.S2);
            assertEquals(List.of(ID), w.manager.reroute(Fixtures.D2));
            assertEquals(S3, w.manager.placement(ID).get().offloadDevice().get());
            assertEquals(0, w.switches.rules(Fixtures.D2).size());
        }
        String used = fromBackup.manager.chain(ID).get().reason();
        assertTrue(used, used.contains("from the backup precomputed for " + Fixtures.D2));
        String computed = recomputed.manager.chain(ID).get().reason();
        assertTrue(computed, computed.contains("(recomputed,"));
        assertEquals(tables(recomputed), tables(fromBackup));
    }

    @Test
    public void aFailureIsHandledFromTheBackupWithTheRulesARecomputationInstalls() {
        TwoPathWorld fromBackup = deployed();
        TwoPathWorld recomputed = deployed();
        failS2(fromBackup, recomputed);
        assertEquals(recomputed.manager.placement(ID), fromBackup.manager.placement(ID));
        // the moved chain's backups are computed for its new placement: with s2 down, s3 has no alternative
        fromBackup.manager.awaitBackups();
        assertTrue(backups(fromBackup).failovers().isEmpty());
        // s2 comes back: the next refresh finds it as s3's backup
        fromBackup.net.device(Fixtures.S2, org.metron.app.spi.DeviceRole.OPENFLOW_SWITCH, 1000)
                .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S2, 2, TwoPathWorld.S4, 1);
        fromBackup.manager.refreshBackups(ID);
        fromBackup.manager.awaitBackups();
        FailoverBackup back = backups(fromBackup).failover(S3).orElseThrow();
        assertEquals(fromBackup.manager.placement(ID).get(), back.basis());
        assertEquals(Fixtures.D2, back.moved().offloadDevice().get());
        fromBackup.manager.remove(ID);
        assertEquals(0, fromBackup.switches.total());
    }

    @Test
    public void aBackupComputedForAnotherPlacementIsNotUsed() {
        TwoPathWorld w = deployed();
        FailoverBackup b = backups(w).failover(Fixtures.D2).orElseThrow();
        // as if the chain had been rescaled since: the stored backup's basis is not the current placement
        FailoverBackup stale = new FailoverBackup(Fixtures.D2, b.moved(), b.moved(), b.switchRules());
        w.store.backups().put(ID, backups(w).withFailovers(Map.of(Fixtures.D2, stale)));
        w.net.down(Fixtures.S2);
        w.manager.reroute(Fixtures.D2);
        assertTrue(w.manager.chain(ID).get().reason().contains("(recomputed,"));
        assertEquals(S3, w.manager.placement(ID).get().offloadDevice().get());
    }
    /** Class 0's offload rules on {@code device}: the group tag each writes, with its source-port slice. */
    private static Set<String> class0Rules(TwoPathWorld w, DeviceId device) {
        Placement p = w.manager.placement(ID).get();
        return w.switches.rules(device).stream().flatMap(r -> p.groups().stream()
                .filter(g -> RuleRetagger.taggedClass(r, g.tag()).equals(java.util.Optional.of(0)))
                .map(g -> g.groupId() + " " + RuleRetagger.sportBits(r).orElseThrow()))
                .collect(Collectors.toSet());
    }

    /**
     * A class split changes the chain's offload rules (class 0 of g0 divided by source-port bit 0: g0 keeps the
     * bit clear, a new group g0.1 with its own tag and core takes the bit set). The split refreshes the backups
     * (ScalingExecutor commits through {@link CompiledChains#rulesChanged}): the backup for the offload switch s2
     * failing is computed for the split placement, and applying it installs on s3 the split's rules - class 0 as
     * two halves, each tagged for its group, and transit for g0.1's tag on s4 - not the one rule of before the
     * split; a recomputation installs the same. The agent is the TestAgent stand-in: switch rules are what is
     * checked here (ScalingExecutorTest splits on a real agent).
     */
    @Test
    public void afterASplitTheBackupAppliedOnAFailureCarriesTheSplitRules() {
        TwoPathWorld fromBackup = deployed();
        TwoPathWorld recomputed = deployed();
        FailoverBackup before = backups(fromBackup).failover(Fixtures.D2).orElseThrow();
        assertEquals(Set.of("g0 whole"), class0Rules(fromBackup, Fixtures.D2));
        for (TwoPathWorld w : List.of(fromBackup, recomputed)) {
            ScalingEvent e = new ScalingExecutor(w.store, new ScalingStore(new LocalStoreFactory()), w.servers,
                    w.switches, w.manager, w.manager, Fixtures.APP, Duration.ofSeconds(2), System::currentTimeMillis,
                    null, new java.util.Random(), w.leadership)
                    .splitClass(ID, "g0", 0, 0, "test", System.currentTimeMillis());
            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            w.manager.awaitBackups();
        }
        Set<String> split = Set.of("g0 sport&0x0001=0x0000", "g0.1 sport&0x0001=0x0001");
        assertEquals(split, class0Rules(fromBackup, Fixtures.D2));
        FailoverBackup after = backups(fromBackup).failover(Fixtures.D2).orElseThrow();
        assertEquals("computed for the split placement", fromBackup.manager.placement(ID).get(), after.basis());
        assertNotEquals(before.basis(), after.basis());
        Tag moved = fromBackup.manager.placement(ID).get().groups().stream()
                .filter(g -> g.groupId().equals("g0.1")).findFirst().orElseThrow().tag();
        assertTrue("the pre-split backup has nothing for the new group", before.switchRules().stream()
                .noneMatch(r -> RuleRetagger.matchesGroup(r.rule(), moved)
                        || RuleRetagger.taggedClass(r.rule(), moved).isPresent()));
        failS2(fromBackup, recomputed);
        // what moved to s3: class 0 divided as on s2, each half tagged for its group; g0.1's tag reaches the server
        assertEquals(split, class0Rules(fromBackup, S3));
        assertEquals(1, fromBackup.switches.rules(DeviceId.deviceId(TwoPathWorld.S4)).stream()
                .filter(r -> RuleRetagger.matchesGroup(r, moved)
                        && r.selector().criteria().toString().contains("IN_PORT:2")).count());
        assertEquals(recomputed.store.installed().get(ID).get().value().switchRules().size(),
                fromBackup.store.installed().get(ID).get().value().switchRules().size());
        assertEquals(fromBackup.switches.total(),
                fromBackup.store.installed().get(ID).get().value().switchRules().size());
        fromBackup.manager.remove(ID);
        assertEquals(0, fromBackup.switches.total());
    }
    /**
     * The chain deployed with at most 1 core per server (its two groups share it) beside a second server on
     * s4:11, then class 0's source-port-bit-0 half scaled out to the other server (no core left for it). Both
     * servers' agents are TestAgent stand-ins (ScaleOutExecutorTest scales out between real agents).
     */
    private static TwoPathWorld scaledOut() {
        return scaledOut(new TwoPathWorld(), x -> x.splitClass(ID, "g0", 0, 0, "test", System.currentTimeMillis()));
    }

    /** {@code w}'s chain deployed as {@link #scaledOut()} says, then scaled out by {@code split}. */
    private static TwoPathWorld scaledOut(TwoPathWorld w, java.util.function.Function<ScalingExecutor,
            ScalingEvent> split) {
        w.servers.add(new MetronServer(DeviceId.deviceId("metron:b"), new TestAgent("b:1", 4, 0.1)
                .nic("eth0", true, 64), Map.of("eth0", ConnectPoint.deviceConnectPoint(TwoPathWorld.S4 + "/11"))));
        String json = TwoPathWorld.json("r").replace("\"maxCpuCores\": 4", "\"maxCpuCores\": 1");
        assertTrue(json, json.contains("\"maxCpuCores\": 1"));
        assertEquals(ChainState.ACTIVE, w.manager.submit(json).state());
        ScalingEvent e = split.apply(new ScalingExecutor(w.store, new ScalingStore(new LocalStoreFactory()),
                w.servers, w.switches, w.manager, w.manager, Fixtures.APP, Duration.ofSeconds(2),
                System::currentTimeMillis, new RulePlanner(Fixtures.APP, w.net), new java.util.Random(1),
                w.leadership));
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        w.manager.awaitBackups();
        return w;
    }

    /**
     * NAPT with replies: UDP to ports 1000 and 1001 are forward classes 0 and 1, the rest dropped (class 2);
     * replies from those ports are reply classes 3 and 4, each answering its own forward class (so the group
     * splits into two units, docs/scaling.md#replies).
     */
    private static CompiledChain answered(String name, TargetProfile profile) {
        List<TrafficClass> classes = new java.util.ArrayList<>();
        List<OffloadRule> rules = new java.util.ArrayList<>();
        List<OffloadRule> replyRules = new java.util.ArrayList<>();
        for (int c = 0; c < 2; c++) {
            classes.add(new TrafficClass(c, List.of("udp dst port " + (1000 + c)), 0, List.of(), false, "napt",
                    "napt"));
            rules.add(OffloadRule.of(20, RuleMatch.builder().ethType(0x0800).ipProto(17)
                    .l4Dst(RangeMatch.exact(1000 + c, 16)).build(), RuleAction.toServer(c)));
            classes.add(new TrafficClass(3 + c, List.of("udp src port " + (1000 + c)), 1, List.of(), false, "napt",
                    "reply: restore by input 1 of the SynthRewriter of 'napt'; egress 1 (fw.out1)"));
            replyRules.add(OffloadRule.of(5, RuleMatch.builder().ethType(0x0800).ipProto(17)
                    .l4Src(RangeMatch.exact(1000 + c, 16)).build(), RuleAction.toServer(3 + c)));
        }
        classes.add(new TrafficClass(2, List.of("-"), -1, List.of(), false, "", "deny"));
        rules.add(OffloadRule.of(10, RuleMatch.builder().build(), RuleAction.drop()));
        return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, List.of(0, 1, 3, 4),
                "rw :: SynthRewriter(PATTERN 10.9.9.9 1024-65535 - -);", "napt", false)), rules, replyRules,
                List.of("fw.out0", "fw.out1"), new SynthStats(5, 5, rules.size() + replyRules.size(), 0, Map.of()),
                Map.of(3, List.of(0), 4, List.of(1)));
    }

    /**
     * A chain with a reply ingress at s4:20 whose group scaled out with forward class 1 and the reply class 4
     * answering it: the backup for s2 failing keeps the replies going to the other server — the reply rules on s4
     * (the egress point's device, not the offload device) send reply class 4 out of s4's port toward the other
     * server, tagged for the remote group, and reply class 3 toward the chain's server; the other server's
     * restored replies have their return rule from s4 to s3 (the way to the ingress point once s2 is gone).
     */
    @Test
    public void aScaledOutGroupsRepliesKeepGoingToTheOtherServerAfterAFailover() {
        java.util.function.Function<ScalingExecutor, ScalingEvent> split = x -> x.split(ID, "g0",
                Map.of(0, 500.0, 3, 500.0, 1, 300.0, 4, 300.0), "test", System.currentTimeMillis());
        TwoPathWorld fromBackup = scaledOut(new TwoPathWorld((spec, profile) -> answered(spec.name(), profile)), split);
        TwoPathWorld recomputed = scaledOut(new TwoPathWorld((spec, profile) -> answered(spec.name(), profile)), split);
        Placement p = fromBackup.manager.placement(ID).get();
        GroupAssignment remote = p.groups().stream().filter(GroupAssignment::remote).findFirst().orElseThrow();
        GroupAssignment home = p.groups().get(0);
        assertEquals(List.of(1, 4), remote.classIds());
        boolean bIsRemote = remote.server().get().equals(DeviceId.deviceId("metron:b"));
        PortNumber otherPort = PortNumber.portNumber(bIsRemote ? 11 : 10);
        PortNumber homePort = PortNumber.portNumber(bIsRemote ? 10 : 11);

        failS2(fromBackup, recomputed);

        DeviceId s4 = DeviceId.deviceId(TwoPathWorld.S4);
        Map<Integer, FlowRule> replies = fromBackup.store.installed().get(ID).get().value().switchRules().stream()
                .filter(r -> r.role() == org.metron.app.api.RuleInfo.Role.REPLY).map(r -> r.rule())
                .collect(Collectors.toMap(r -> RuleRetagger.taggedClass(r, remote.tag())
                        .orElseGet(() -> RuleRetagger.taggedClass(r, home.tag()).orElse(-1)), r -> r));
        assertEquals(Set.of(3, 4), replies.keySet());
        assertTrue(replies.values().stream().allMatch(r -> r.deviceId().equals(s4)));
        assertEquals(Optional.of(4), RuleRetagger.taggedClass(replies.get(4), remote.tag()));
        assertTrue(replies.get(4).treatment().allInstructions().contains(Instructions.createOutput(otherPort)));
        assertEquals(Optional.of(3), RuleRetagger.taggedClass(replies.get(3), home.tag()));
        assertTrue(replies.get(3).treatment().allInstructions().contains(Instructions.createOutput(homePort)));
        assertTrue("the other server's restored replies go on toward s3", fromBackup.switches.rules(s4).stream()
                .anyMatch(r -> r.selector().criteria().toString().contains("IN_PORT:" + otherPort)
                        && r.selector().criteria().toString().contains(home.tag().replyEgressMac().toString())
                        && r.treatment().allInstructions().contains(Instructions.createOutput(
                        PortNumber.portNumber(2)))));
        assertEquals(fromBackup.switches.total(),
                fromBackup.store.installed().get(ID).get().value().switchRules().size());
    }

    /**
     * A chain with a group on another server fails over with it: the backup for s2 failing (computed after the
     * scale-out) puts on s3 class 0's half for the remote group, leaving toward s4, and on s4 the remote group's
     * tag from s3 to the other server's port 11; a recomputation installs the same tables.
     */
    @Test
    public void aScaledOutGroupKeepsItsPathToTheOtherServerAfterAFailover() {
        TwoPathWorld fromBackup = scaledOut();
        TwoPathWorld recomputed = scaledOut();
        Placement p = fromBackup.manager.placement(ID).get();
        GroupAssignment remote = p.groups().stream().filter(GroupAssignment::remote).findFirst().orElseThrow();
        assertEquals(p, backups(fromBackup).failover(Fixtures.D2).orElseThrow().basis());
        PortNumber otherPort = PortNumber.portNumber(remote.server().get().equals(DeviceId.deviceId("metron:b"))
                ? 11 : 10);

        failS2(fromBackup, recomputed);

        assertEquals(Set.of("g0 sport&0x0001=0x0000", remote.groupId() + " sport&0x0001=0x0001"),
                class0Rules(fromBackup, S3));
        assertTrue(fromBackup.switches.rules(S3).stream().filter(r -> RuleRetagger.taggedClass(r, remote.tag())
                .isPresent()).allMatch(r -> r.treatment().allInstructions().contains(
                Instructions.createOutput(PortNumber.portNumber(2)))));
        assertEquals(1, fromBackup.switches.rules(DeviceId.deviceId(TwoPathWorld.S4)).stream()
                .filter(r -> RuleRetagger.matchesGroup(r, remote.tag())
                        && r.selector().criteria().toString().contains("IN_PORT:2")
                        && r.treatment().allInstructions().contains(Instructions.createOutput(otherPort))).count());
        assertEquals(fromBackup.switches.total(),
                fromBackup.store.installed().get(ID).get().value().switchRules().size());
    }
}
