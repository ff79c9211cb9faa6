package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.rest.MetronText;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.app.testing.Fixtures;
import org.onlab.packet.MacAddress;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;
import org.onosproject.store.service.Versioned;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Splits and merges against a real metron-agent and the ONOS-style switch stand-in ({@link ScalingFixture}):
 * groups, cores, tags, switch rules, flow state and the store after each operation, rollback on a switch failure,
 * refusals, a class divided by source-port bits and joined back. Recovery after a crash: {@link
 * ScalingRecoveryTest}; the load monitor's decisions: {@link ScalingMonitorTest}; reply classes: {@link
 * ScalingRepliesTest}.
 */
public class ScalingExecutorTest extends ScalingFixture {
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
