package org.metron.app.scaling;

import org.junit.Test;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Tag;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.store.TagKey;
import org.metron.app.testing.Fixtures;
import org.onlab.packet.MacAddress;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Scale-out of a chain with a reply ingress between two real metron-agents ({@link ScaleOutFixture}): the reply
 * rules follow the scaled-out group to the other server and back, a refused reply batch, a controller stopped
 * before the reply batch, and the other server lost.
 */
public class ScaleOutRepliesTest extends ScaleOutFixture {
    /** Whether a rule matches frames to exactly {@code mac} (a return rule matching a marker). */
    private static boolean matchesDestination(FlowRule r, MacAddress mac) {
        return r.selector().criteria().stream().anyMatch(c -> c.type() == Criterion.Type.ETH_DST
                && ((EthCriterion) c).mac().equals(mac));
    }

    /** Forward class c with reply class c + 5 answering it (the "answers" chain): 0, 3, 5, 8 stay, 1, 2, 6, 7 go. */
    private static final Map<Integer, Double> REPLY_RATES = Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0,
            5, 500.0, 6, 300.0, 7, 200.0, 8, 10.0);

    /**
     * A chain with a reply ingress (NAPT whose replies come back through the egress point, here on s3, so the reply
     * rules sit on another device than the offload rules): a group scales out with the reply classes answering its
     * forward classes. The reply rules of those reply classes tag for the new group (same rule ids) and reach the
     * other server through a transit rule on s2 (the reply path s3 - s2 - server), the other server's restored
     * replies go back to the ingress point under the reply marker, and the flows go with the classes. Merging back
     * leaves every switch as it was before the scale-out: same rule ids, same actions.
     */
    @Test
    public void repliesOfAScaledOutGroupReachTheOtherServerAndReturnFromItAndMergeBackAsBefore() throws Exception {
        Rig rig = new Rig("answers-out", S3 + "/3");
        GroupAssignment g0 = rig.group("g0");
        Tag marker = g0.tag();
        Map<FlowId, TrafficTreatment> before = rig.allRules();
        Map<Integer, FlowRule> replies = rig.replyRules();
        assertEquals(Set.of(5, 6, 7, 8), replies.keySet());
        assertTrue("the reply rules sit on s3", replies.values().stream().allMatch(r -> r.deviceId().equals(D3)));
        rig.importFlow(rig.home, "g0", 5000, 2000);

        ScalingEvent e = rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.steps(), e.steps().contains("replies"));
        GroupAssignment moved = rig.group("g0.1");
        assertEquals(rig.away.id(), moved.server().get());
        assertEquals(List.of(1, 2, 6, 7), moved.classIds());
        assertEquals(List.of(0, 3, 5, 8), rig.group("g0").classIds());
        assertEquals(List.of(1, 2, 6, 7), rig.groups(rig.away).get(0).getClassIdsList());
        assertEquals("the flows went with the classes", Map.of(5000, 2000), rig.flows(rig.away, "g0.1"));
        Map<Integer, FlowRule> spread = rig.replyRules();
        assertEquals("the same reply rules, modified in place", replies.keySet().stream().map(c -> replies.get(c)
                .id()).collect(Collectors.toSet()), spread.values().stream().map(FlowRule::id)
                .collect(Collectors.toSet()));
        for (int c : List.of(6, 7)) {
            assertEquals(moved.tag().classMac(c), destination(spread.get(c)));
        }
        for (int c : List.of(5, 8)) {
            assertEquals(g0.tag().classMac(c), destination(spread.get(c)));
        }
        assertTrue("s3 has one way to the servers", spread.values().stream()
                .allMatch(r -> output(r).equals(PortNumber.portNumber(1))));
        // s2: the new tag from s3 (replies) and from s1 (forward) to the other server
        for (long in : new long[]{4, 1}) {
            List<FlowRule> transit = rig.s2Rules(PortNumber.portNumber(in)).stream()
                    .filter(r -> RuleRetagger.matchesGroup(r, moved.tag())).collect(Collectors.toList());
            assertEquals("from s2 port " + in, 1, transit.size());
            assertEquals(rig.awayPort(), output(transit.get(0)));
        }
        // from the other server: its output to the egress point (s3) and its restored replies to the ingress (s1)
        List<FlowRule> back = rig.s2Rules(rig.awayPort());
        assertEquals(back.toString(), 2, back.size());
        assertEquals(PortNumber.portNumber(4), output(back.stream().filter(r -> matchesDestination(r,
                marker.egressMac())).findFirst().orElseThrow()));
        assertEquals(PortNumber.portNumber(1), output(back.stream().filter(r -> matchesDestination(r,
                marker.replyEgressMac())).findFirst().orElseThrow()));
        assertTrue("s1 already carries replies from s2 to the ingress point", rig.switches.rules(Fixtures.D1)
                .stream().anyMatch(r -> matchesDestination(r, marker.replyEgressMac())));
        assertEquals(2, rig.offloadRulesFor(moved.tag()).size());
        rig.assertStoreTruthful();

        // a flow the other server made comes back with the merge
        rig.importFlow(rig.away, "g0.1", 5002, 3002);
        ScalingEvent m = rig.executor().merge(rig.chain, "g0.1", "g0", "test", System.currentTimeMillis());

        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertTrue(m.steps(), m.steps().contains("replies"));
        assertEquals(List.of(0, 1, 2, 3, 5, 6, 7, 8), rig.group("g0").classIds());
        assertEquals(Map.of(5000, 2000, 5002, 3002), rig.flows(rig.home, "g0"));
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals("every switch as before the scale-out", before, rig.allRules());
        rig.assertStoreTruthful();
        assertFalse(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
    }

    /**
     * The reply batch on s3 is refused after the forward batch moved traffic: the scale-out is done and says so; the
     * reply rules still send the moved reply classes to the chain's server (whose group still holds the flows made
     * before), and the store says what the switch holds. The merge back then finds every switch as before.
     */
    @Test
    public void aRefusedReplyBatchLeavesTheScaleOutDoneAndTheStoreTruthful() throws Exception {
        Rig rig = new Rig("answers-out-refused", S3 + "/3");
        Map<FlowId, TrafficTreatment> before = rig.allRules();
        Map<Integer, FlowRule> replies = rig.replyRules();
        rig.crashing.crashOn = D3;
        rig.crashing.failInstead = true;

        ScalingEvent e = rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());

        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(e.detail(), e.detail().contains("reply rules of classes [1, 2, 6, 7] still tag them for g0")
                && e.detail().contains("refused"));
        GroupAssignment moved = rig.group("g0.1");
        assertTrue(moved.remote());
        assertEquals(2, rig.offloadRulesFor(moved.tag()).size());
        Map<Integer, FlowRule> now = rig.replyRules();
        replies.forEach((c, r) -> assertEquals(destination(r), destination(now.get(c))));
        rig.assertStoreTruthful();

        ScalingEvent m = rig.executor().merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());
        assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals(before, rig.allRules());
        rig.assertStoreTruthful();
    }

    /**
     * The controller stops between the forward batch and the reply batch (journal at SWITCHED): on restart the
     * recovery re-tags forward (again) and the replies toward the other server, syncs and commits.
     */
    @Test
    public void aControllerThatStoppedBeforeTheReplyBatchSendsTheRepliesToTheOtherServerOnRestart()
            throws Exception {
        Rig rig = new Rig("answers-out-crash", S3 + "/3");
        Tag original = rig.group("g0").tag();
        rig.importFlow(rig.home, "g0", 5000, 2000);
        rig.crashing.crashOn = D3;
        try {
            rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());
            fail("the controller should have crashed");
        } catch (IllegalStateException expected) {
            // the journal holds the operation at SWITCHED
        }
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());
        Tag moved = rig.group("g0.1").tag();
        assertEquals("forward re-tagged", 2, rig.offloadRulesFor(moved).size());
        rig.replyRules().forEach((c, r) -> assertEquals("replies not yet", original.classMac(c), destination(r)));

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(1, recovered.size());
        assertEquals(recovered.get(0).detail(), ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        Map<Integer, FlowRule> replies = rig.replyRules();
        for (int c : List.of(5, 6, 7, 8)) {
            assertEquals("class " + c, (c == 6 || c == 7 ? moved : original).classMac(c), destination(replies.get(c)));
        }
        assertEquals(Map.of(5000, 2000), rig.flows(rig.away, "g0.1"));
        assertTrue(rig.scaling.inProgress().isEmpty());
        rig.assertStoreTruthful();
    }

    /**
     * The server a reply-answered group was scaled out to is lost ({@link ScalingExecutor#serverLost}, called here
     * directly while its agent still runs: the detection is aLostOtherServerGivesItsGroupBackToTheChainsServer's;
     * nothing is asked of the agent either way): the group comes back into g0, the reply rules tag for g0 toward
     * the chain's server again (same ids) and the reply path to the lost server goes with the rest of its path —
     * every switch as before the scale-out.
     */
    @Test
    public void aLostOtherServerGivesTheRepliesOfItsGroupBackToTheChainsServer() throws Exception {
        Rig rig = new Rig("answers-out-lost", S3 + "/3");
        Map<FlowId, TrafficTreatment> before = rig.allRules();
        ScalingEvent e = rig.executor().split(rig.chain, "g0", REPLY_RATES, "test", System.currentTimeMillis());
        assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
        assertNotEquals(before, rig.allRules());

        List<ScalingEvent> back = rig.executor().serverLost(rig.chain, rig.away.id(),
                g -> java.util.OptionalLong.empty());

        assertEquals(1, back.size());
        assertEquals(back.get(0).detail(), ScalingEvent.Outcome.DONE, back.get(0).outcome());
        assertEquals(List.of("g0"), rig.placement().groups().stream().map(GroupAssignment::groupId)
                .collect(Collectors.toList()));
        assertEquals(List.of(0, 1, 2, 3, 5, 6, 7, 8), rig.groups(rig.home).get(0).getClassIdsList());
        assertEquals("every switch as before the scale-out", before, rig.allRules());
        rig.assertStoreTruthful();
        // the stand-in for a lost server still runs the group: gone with the server in the real case
        rig.away.agent().removePipeline(rig.chain.name()).get(10, TimeUnit.SECONDS);
    }
}
