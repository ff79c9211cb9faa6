package org.metron.app.impl;

import org.junit.Before;
import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.TagType;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The whole lifecycle through ChainManager: submit, query, update, remove, and every failure's rollback. */
public class ChainManagerTest {
    private World w;

    @Before
    public void setUp() {
        w = new World(2, Fixtures.synthesis(), 42);
    }

    private TestAgent agentOf(Placement p) {
        return w.agents.get(p.server().get().toString().endsWith("0") ? 0 : 1);
    }

    @Test
    public void submitDeploysEverythingAndRemoveTakesItAllAway() {
        Chain c = w.manager.submit(Fixtures.chainJson("web"));
        assertEquals(ChainState.ACTIVE, c.state());
        assertEquals(ChainState.ACTIVE, w.manager.chain(ChainId.of("web")).get().state());

        Placement p = w.manager.placement(ChainId.of("web")).get();
        TestAgent agent = agentOf(p);
        // the less loaded of the two servers (loads 0.1 and 0.2)
        assertEquals(Fixtures.serverId(0), p.server().get().toString());
        assertEquals(2, p.groups().size());
        assertEquals(2, w.manager.tags().size());
        DeployPipelineRequest req = agent.pipelines().get("web");
        assertEquals("eth0", req.getIngressNic());
        assertEquals(2, req.getGroupsCount());
        assertEquals(2, agent.nicRules().size());
        // 4 offload rules on s1, 2 transit on s2, return rules on s2 and s1
        assertEquals(4 + 1, w.switches.rules(Fixtures.D1).size());
        assertEquals(2 + 1, w.switches.rules(Fixtures.D2).size());
        assertEquals(8, w.manager.rules(null).size());
        assertEquals(5, w.manager.rules(Fixtures.D1).size());
        assertTrue(w.manager.rules(null).stream().allMatch(r -> r.packets() == 7));

        List<TrafficClassInfo> tcs = w.manager.trafficClasses(ChainId.of("web"));
        assertEquals(3, tcs.size());
        assertEquals("g0", tcs.get(0).groupId());
        assertEquals(p.groups().get(0).tag(), tcs.get(0).tag());
        assertFalse(tcs.get(2).needsServer());

        w.manager.remove(ChainId.of("web"));
        assertTrue(w.manager.chains().isEmpty());
        assertTrue(w.manager.tags().isEmpty());
        assertTrue(w.manager.placements().isEmpty());
        assertEquals(0, w.switches.total());
        assertTrue(agent.pipelines().isEmpty());
        assertTrue(agent.nicRules().isEmpty());
        // offload device first on removal: no packet gets tagged toward a pipeline being removed
        List<String> log = w.switches.log();
        assertEquals("remove " + Fixtures.S1 + " 5", log.get(log.size() - 2));
    }

    @Test
    public void twoChainsGetDisjointCoresAndTags() {
        w.manager.submit(Fixtures.chainJson("a"));
        w.agents.get(0).load(0.9); // a's server is now busy: b goes to the other one
        w.manager.submit(Fixtures.chainJsonAt("b", 2));
        Placement a = w.manager.placement(ChainId.of("a")).get();
        Placement b = w.manager.placement(ChainId.of("b")).get();
        assertFalse(a.server().equals(b.server()));
        assertEquals(4, w.manager.tags().stream().map(t -> t.tag()).distinct().count());
    }

    @Test
    public void failedOffloadInstallRollsBackAgentAndOtherSwitches() {
        w.manager.submit(Fixtures.chainJson("keep"));
        int rulesBefore = w.switches.total();
        w.switches.reject(Fixtures.D1);
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.submit(Fixtures.chainJsonAt("broken", 2)));
        assertEquals(Fault.SWITCH_FAILURE, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains(Fixtures.S1) && e.getMessage().contains("rolled back"));

        Chain broken = w.manager.chain(ChainId.of("broken")).get();
        assertEquals(ChainState.FAILED, broken.state());
        assertTrue(broken.reason().contains("OFPET_BAD_MATCH"));
        assertFalse(w.manager.placement(ChainId.of("broken")).isPresent());
        assertEquals(2, w.manager.tags().size()); // only "keep"'s
        assertEquals(rulesBefore, w.switches.total());
        assertEquals("the other device's staged rules were dropped", 0, w.switches.openStages());
        for (TestAgent a : w.agents) {
            assertFalse(a.pipelines().containsKey("broken"));
            assertEquals(a.pipelines().containsKey("keep") ? 2 : 0, a.nicRules().size());
        }
        assertEquals(ChainState.ACTIVE, w.manager.chain(ChainId.of("keep")).get().state());
    }

    @Test
    public void switchRulesAreStagedWhileTheAgentDeploysAndGoLiveOnlyOnceItRuns() {
        List<String> commits = new java.util.ArrayList<>();
        w.switches.beforeCommit(d -> commits.add(d + (w.agents.stream()
                .anyMatch(a -> a.pipelines().containsKey("web")) ? " after pipeline" : " BEFORE PIPELINE")));
        w.manager.submit(Fixtures.chainJson("web"));
        // server side first, the offload device (s1, which tags traffic toward the server) last
        assertEquals(List.of(Fixtures.S2 + " after pipeline", Fixtures.S1 + " after pipeline"), commits);
        List<String> log = w.switches.log();
        assertEquals(List.of("stage " + Fixtures.S2, "stage " + Fixtures.S1, "commit " + Fixtures.S2,
                "commit " + Fixtures.S1), log.stream().map(l -> l.substring(0, l.lastIndexOf(' ')))
                .collect(java.util.stream.Collectors.toList()));
        assertEquals(0, w.switches.openStages());
    }

    @Test
    public void aPlanThatFailsAfterTheAgentStartedTakesThePipelineAndNicRulesBackOff() {
        // a rule no OpenFlow selector can express: planning fails while the agent already deploys
        Synthesis broken = (spec, profile) -> {
            org.metron.synth.CompiledChain c = Fixtures.compiled(spec.name(), profile);
            List<org.metron.synth.OffloadRule> rules = new java.util.ArrayList<>(c.offloadRules());
            rules.add(org.metron.synth.OffloadRule.of(5, org.metron.synth.RuleMatch.builder().ethType(0x0800)
                    .ipProto(6).tcpFlags(org.metron.synth.BitMatch.of(2, 2)).build(),
                    org.metron.synth.RuleAction.drop()));
            return new org.metron.synth.CompiledChain(c.name(), profile, c.classes(), c.groups(), rules, c.egress(),
                    c.stats());
        };
        World b = new World(1, broken, 1);
        MetronException e = assertThrows(MetronException.class, () -> b.manager.submit(Fixtures.chainJson("t")));
        assertEquals(Fault.INTERNAL, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("TCP flags"));
        TestAgent agent = b.agents.get(0);
        assertTrue(agent.calls().toString(), agent.calls().containsAll(List.of("DeployPipeline", "RemovePipeline")));
        assertTrue(agent.pipelines().isEmpty());
        assertTrue(agent.nicRules().isEmpty());
        assertEquals(0, b.switches.total());
        assertTrue(b.manager.tags().isEmpty());
        assertEquals(ChainState.FAILED, b.manager.chain(ChainId.of("t")).get().state());
    }

    @Test
    public void aPipelineThatFailsDiscardsTheStagedSwitchRules() {
        w.agents.forEach(a -> a.failDeploy(true));
        assertThrows(MetronException.class, () -> w.manager.submit(Fixtures.chainJson("x")));
        assertTrue(w.switches.log().toString(), w.switches.log().stream().noneMatch(l -> l.startsWith("commit")));
        assertTrue(w.switches.log().toString(), w.switches.log().stream().anyMatch(l -> l.startsWith("discard")));
        assertEquals(0, w.switches.openStages());
        assertEquals(0, w.switches.total());
    }

    @Test
    public void failedPipelineRemovesNicRulesAndReleasesTags() {
        w.agents.forEach(a -> a.failDeploy(true));
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(Fixtures.chainJson("x")));
        assertEquals(Fault.AGENT_FAILURE, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("unknown element"));
        w.agents.forEach(a -> assertTrue(a.nicRules().isEmpty()));
        assertTrue(w.manager.tags().isEmpty());
        assertEquals(0, w.switches.total());
        // a FAILED chain may be submitted again once the cause is fixed
        w.agents.forEach(a -> a.failDeploy(false));
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("x")).state());
    }

    @Test
    public void badInputIsRejectedAndStoresNothing() {
        MetronException json = assertThrows(MetronException.class, () -> w.manager.submit("{\"name\": "));
        assertEquals(Fault.INVALID_JSON, json.fault());
        assertTrue(json.getMessage(), json.getMessage().contains("line 1"));

        MetronException elem = assertThrows(MetronException.class, () -> w.manager.submit(
                Fixtures.chainJson("e").replace("IPFilter", "Bogus")));
        assertEquals(Fault.INVALID_CHAIN, elem.fault());
        assertTrue(elem.getMessage(), elem.getMessage().contains("Bogus"));

        MetronException point = assertThrows(MetronException.class, () -> w.manager.submit(
                Fixtures.chainJson("p").replace(Fixtures.S1 + "/1", "nowhere")));
        assertEquals(Fault.INVALID_CHAIN, point.fault());
        assertTrue(point.getMessage(), point.getMessage().contains("deployment.ingressPoint"));

        assertTrue(w.manager.chains().isEmpty());
        assertEquals(0, w.switches.total());
    }

    @Test
    public void deeplyNestedJsonIsInvalidJsonNotAStackOverflow() {
        String deep = "{\"name\": " + "[".repeat(100_000) + "]".repeat(100_000) + "}";
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(deep));
        assertEquals(Fault.INVALID_JSON, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("line 1:") && e.getMessage().contains("nested deeper"));
        // brackets inside strings (escaped quotes too) are text, not nesting
        assertTrue(ChainRequests.readTree("{\"a\": \"\\\"" + "[".repeat(200) + "\"}").isObject());
        assertTrue(w.manager.chains().isEmpty());
    }

    @Test
    public void badInputOverAFailedChainKeepsItsRecordAndReason() {
        MetronException big = assertThrows(MetronException.class,
                () -> w.manager.submit(Fixtures.chainJson("f", "mac", 8, 1)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, big.fault());
        Chain failed = w.manager.chain(ChainId.of("f")).get();
        assertEquals(ChainState.FAILED, failed.state());
        MetronException bad = assertThrows(MetronException.class, () -> w.manager.submit(
                Fixtures.chainJson("f").replace("IPFilter", "Bogus")));
        assertEquals(Fault.INVALID_CHAIN, bad.fault());
        assertEquals(failed, w.manager.chain(ChainId.of("f")).get());
    }

    @Test
    public void anUpdateWhileTheAgentIsDownLeavesTheRunningChainWhole() {
        w.manager.submit(Fixtures.chainJson("a"));
        Placement before = w.manager.placement(ChainId.of("a")).get();
        TestAgent agent = agentOf(before);
        int rules = w.switches.total();
        agent.unreachable(true);
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.update(ChainId.of("a"), Fixtures.chainJson("a", "vlan", 2, 2)));
        assertEquals(Fault.AGENT_FAILURE, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("10.0.0.") && e.getMessage().contains("untouched"));
        assertEquals(ChainState.ACTIVE, w.manager.chain(ChainId.of("a")).get().state());
        assertEquals(before, w.manager.placement(ChainId.of("a")).get());
        assertEquals(rules, w.switches.total());
        assertTrue(agent.pipelines().containsKey("a"));
    }

    @Test
    public void impossiblePlacementNamesEveryServer() {
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.submit(Fixtures.chainJson("big", "mac", 8, 1)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains(Fixtures.serverId(0) + ": 4 free cores")
                && e.getMessage().contains(Fixtures.serverId(1) + ": 4 free cores"));
        assertEquals(0, w.switches.total());
    }

    /** Servers whose NICs dispatch with VMDq MAC pools take MAC-tagged chains but refuse VLAN-tagged ones. */
    @Test
    public void aVlanChainIsRefusedWhereEveryNicDispatchesMacPoolsOnly() {
        World pools = new World(2, Fixtures.synthesis(), 42, DispatchMode.DISPATCH_VMDQ, TagType.TAG_MAC);
        MetronException e = assertThrows(MetronException.class,
                () -> pools.manager.submit(Fixtures.chainJson("v", "vlan", 1, 1)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        for (int i = 0; i < 2; i++) {
            assertTrue(e.getMessage(), e.getMessage().contains(Fixtures.serverId(i) + ": 2 usable NICs, none of "
                    + "those reachable from " + Fixtures.S1 + "/1 can dispatch vlan tags: NIC eth0 dispatches with "
                    + "vmdq, which steers mac tags only (no vlan tag dispatch)"));
        }
        assertEquals(0, pools.switches.total());
        assertTrue(pools.agents.stream().allMatch(a -> a.pipelines().isEmpty()));
        assertEquals(ChainState.ACTIVE, pools.manager.submit(Fixtures.chainJson("m", "mac", 1, 1)).state());
    }

    @Test
    public void unreachableAgentsAreAnAgentFailure() {
        w.agents.forEach(a -> a.unreachable(true));
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(Fixtures.chainJson("u")));
        assertEquals(Fault.AGENT_FAILURE, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("10.0.0.1:50051") && e.getMessage().contains("refused"));
    }

    @Test
    public void duplicateAndUnknownChains() {
        w.manager.submit(Fixtures.chainJson("d"));
        assertEquals(Fault.DUPLICATE_CHAIN, assertThrows(MetronException.class,
                () -> w.manager.submit(Fixtures.chainJson("d"))).fault());
        assertEquals(Fault.UNKNOWN_CHAIN, assertThrows(MetronException.class,
                () -> w.manager.remove(ChainId.of("nope"))).fault());
        assertEquals(Fault.UNKNOWN_CHAIN, assertThrows(MetronException.class,
                () -> w.manager.trafficClasses(ChainId.of("nope"))).fault());
    }

    @Test
    public void validateIsADryRun() {
        ValidationReport r = w.manager.validate(Fixtures.chainJson("v"));
        assertEquals(3, r.classes());
        assertEquals(2, r.groups());
        assertTrue(r.placement().isPresent());
        assertEquals(Fixtures.D1, r.placement().get().offloadDevice().get());
        assertTrue(w.manager.chains().isEmpty());
        assertTrue(w.manager.tags().isEmpty());
        assertEquals(0, w.switches.total());
        w.agents.forEach(a -> assertTrue(a.pipelines().isEmpty()));

        ValidationReport big = w.manager.validate(Fixtures.chainJson("v", "mac", 9, 1));
        assertFalse(big.placement().isPresent());
        assertTrue(big.placementError(), big.placementError().contains("free cores"));
    }

    @Test
    public void updateReplacesTheDefinitionAndKeepsTheOldOneOnFailure() {
        w.manager.submit(Fixtures.chainJson("u"));
        Chain updated = w.manager.update(ChainId.of("u"), Fixtures.chainJson("u", "vlan", 2, 2));
        assertEquals(ChainState.ACTIVE, updated.state());
        Placement p = w.manager.placement(ChainId.of("u")).get();
        assertEquals("eth1", p.egressNic());
        assertTrue(w.manager.tags().stream().allMatch(t -> t.tag().type() == org.metron.synth.TagType.VLAN));

        w.switches.reject(Fixtures.D1);
        assertThrows(MetronException.class, () -> w.manager.update(ChainId.of("u"), Fixtures.chainJson("u")));
        // rejected update: nothing of the new definition is left and the chain is not silently half-deployed
        assertTrue(w.manager.rules(null).isEmpty() || w.manager.chain(ChainId.of("u")).get().state()
                == ChainState.ACTIVE);

        MetronException bad = assertThrows(MetronException.class,
                () -> w.manager.update(ChainId.of("u"), Fixtures.chainJson("other")));
        assertEquals(Fault.INVALID_CHAIN, bad.fault());
    }

    /**
     * A refused update of a FAILED chain leaves it FAILED as it was: the definition refused before is not brought up
     * behind the PUT's error (seen in the OpenAPI fuzz: a chain refused at submission went ACTIVE through a PUT
     * answered 409, once what had blocked it was gone, and nobody knew to remove it).
     */
    @Test
    public void aRefusedUpdateOfAFailedChainBringsNothingUp() {
        ChainId id = ChainId.of("f");
        w.agents.forEach(a -> a.failDeploy(true));
        assertThrows(MetronException.class, () -> w.manager.submit(Fixtures.chainJson("f")));
        Chain failed = w.manager.chain(id).get();
        assertEquals(ChainState.FAILED, failed.state());
        w.agents.forEach(a -> a.failDeploy(false)); // its old definition would run now
        MetronException e = assertThrows(MetronException.class,
                () -> w.manager.update(id, Fixtures.chainJson("f", "mac", 8, 1)));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertEquals(failed, w.manager.chain(id).get());
        assertFalse(w.manager.placement(id).isPresent());
        assertEquals(0, w.switches.total());
        assertTrue(w.agents.stream().allMatch(a -> a.pipelines().isEmpty()));
    }

    @Test
    public void aChainTheSwitchHandlesAloneNeedsNoServer() {
        Chain c = w.manager.submit(Fixtures.chainJson("stateless-nat"));
        assertEquals(ChainState.ACTIVE, c.state());
        Placement p = w.manager.placement(ChainId.of("stateless-nat")).get();
        assertFalse(p.server().isPresent());
        assertTrue(p.groups().isEmpty());
        assertEquals(Fixtures.D1, p.offloadDevice().get());
        w.agents.forEach(a -> assertTrue(a.pipelines().isEmpty()));
        w.agents.forEach(a -> assertEquals(0, a.resourceQueries()));
        // the egress point is on the offload device itself: only its two rules
        assertEquals(2, w.switches.total());
        assertEquals(1, w.manager.tags().size());
        assertEquals(org.metron.app.api.TagAllocation.EGRESS_GROUP, w.manager.tags().iterator().next().groupId());
        w.manager.remove(ChainId.of("stateless-nat"));
        assertEquals(0, w.switches.total());
        assertTrue(w.manager.tags().isEmpty());
    }

    @Test
    public void removalWhileTheAgentIsDownCanBeRetried() {
        w.manager.submit(Fixtures.chainJson("r"));
        TestAgent agent = agentOf(w.manager.placement(ChainId.of("r")).get());
        agent.unreachable(true);
        Chain left = w.manager.remove(ChainId.of("r")).orElseThrow();
        assertEquals(left, w.manager.chain(ChainId.of("r")).get());
        assertEquals(ChainState.REMOVING, left.state());
        assertTrue(left.reason(), left.reason().startsWith("deleted; not removed yet: pipeline r on "));
        assertEquals(2, left.pending().size());
        // what it still holds stays recorded, so the retry knows what to remove
        assertTrue(w.manager.placement(ChainId.of("r")).isPresent());

        agent.unreachable(false);
        assertTrue(w.manager.remove(ChainId.of("r")).isEmpty());
        assertTrue(w.manager.chains().isEmpty());
        assertTrue(agent.pipelines().isEmpty());
        assertTrue(agent.nicRules().isEmpty());
        assertEquals(0, w.switches.total());
        assertTrue(w.manager.tags().isEmpty());
    }

    @Test
    public void overlappingChainsDoNotShareAnIngressPoint() {
        w.manager.submit(Fixtures.chainJson("first"));
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(Fixtures.chainJson("second")));
        assertEquals(Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().startsWith("chain second's traffic and chain first's traffic both "
                + "enter at " + Fixtures.S1 + "/1 and overlap, e.g. the packet '"));
        assertEquals(8, w.switches.total());
        w.manager.remove(ChainId.of("first"));
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("second")).state());
    }

    @Test
    public void rulesCarryTheirRoles() {
        w.manager.submit(Fixtures.chainJson("r"));
        List<RuleInfo> rules = w.manager.rules(null);
        assertEquals(4, rules.stream().filter(r -> r.role() == RuleInfo.Role.OFFLOAD).count());
        assertEquals(2, rules.stream().filter(r -> r.role() == RuleInfo.Role.TRANSIT).count());
        assertEquals(2, rules.stream().filter(r -> r.role() == RuleInfo.Role.RETURN).count());
    }
}
