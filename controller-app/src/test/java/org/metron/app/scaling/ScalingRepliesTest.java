package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.testing.Fixtures;
import org.onlab.packet.MacAddress;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModVlanIdInstruction;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.metron.app.scaling.ScalingChains.CLASSES;

/**
 * Reply classes in splits and merges against a real metron-agent ({@link ScalingFixture}): a reply class goes
 * with the forward classes it answers, its reply rules are re-tagged (MAC and VLAN tags), a restarted controller
 * re-tags the replies of an operation that re-tagged only its forward classes, a refused reply batch leaves the
 * split done and the store truthful.
 */
public class ScalingRepliesTest extends ScalingFixture {
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
}
