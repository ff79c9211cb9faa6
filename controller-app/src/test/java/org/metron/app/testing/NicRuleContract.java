package org.metron.app.testing;

import org.junit.Test;
import org.metron.agent.v1.NicMatch;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleIds;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.util.List;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.metron.app.testing.ContractCalls.assertFails;
import static org.metron.app.testing.ContractCalls.batch;
import static org.metron.app.testing.ContractCalls.failure;
import static org.metron.app.testing.ContractCalls.ok;

/**
 * {@link AgentContract}'s cases for the NIC rule calls: InstallNicRules, ListNicRules and RemoveNicRules, with
 * their all-or-nothing refusals.
 */
public abstract class NicRuleContract extends PipelineContract {
    // ---- NIC rules ------------------------------------------------------------------------------------------

    @Test
    public void nicRulesAreInstalledListedPerNicAndRemoved() throws Exception {
        int c = workers.get(1);
        NicRule exact = rule(2, 0, c).toBuilder().setMatch(NicMatch.newBuilder().setEthDst("02:4d:00:08:00:01"))
                .build();
        assertEquals(2, ok(agent().installNicRules(batch(rule(1, 7, c), exact))).getApplied());
        // listed as the agent holds them: an eth_dst without a mask matches exactly, the mask says so
        NicRule exactListed = exact.toBuilder().setMatch(exact.getMatch().toBuilder()
                .setEthDstMask("ff:ff:ff:ff:ff:ff")).build();
        assertEquals(List.of(rule(1, 7, c), exactListed), ok(agent().listNicRules("")).getRulesList());
        assertEquals(List.of(rule(1, 7, c), exactListed), ok(agent().listNicRules(nic)).getRulesList());
        assertEquals(1, ok(agent().removeNicRules(List.of(2L))).getApplied());
        assertEquals(Set.of(1L), ruleIds());
    }

    @Test
    public void aRuleIdInstalledOrRepeatedIsAlreadyExistsAndTheBatchInstallsNothing() throws Exception {
        int c = workers.get(0);
        ok(agent().installNicRules(batch(rule(1, 7, c))));
        assertFails(Code.ALREADY_EXISTS, agent().installNicRules(batch(rule(3, 9, c), rule(1, 8, c))));
        assertFails(Code.ALREADY_EXISTS, agent().installNicRules(batch(rule(3, 9, c), rule(3, 8, c))));
        assertEquals(Set.of(1L), ruleIds());
    }

    @Test
    public void anInvalidNicRuleIsInvalidArgumentAndTheBatchInstallsNothing() throws Exception {
        int c = workers.get(0);
        int notWorker = workers.stream().mapToInt(Integer::intValue).max().getAsInt() + 1;
        List<NicRule> bad = List.of(
                rule(2, 7, c).toBuilder().setNic("nonic0").build(),
                rule(2, 7, c).toBuilder().setNic("").build(),
                rule(2, 7, c).toBuilder().setMatch(NicMatch.newBuilder().setEthDst("not-a-mac")).build(),
                rule(2, 7, c).toBuilder().setMatch(NicMatch.newBuilder().setVlan(5000)).build(),
                rule(2, 7, c).toBuilder().setMatch(NicMatch.newBuilder().setIpProto(17)).build(), // no IP version
                rule(2, 7, c).toBuilder().clearAction().build(),
                rule(2, 7, notWorker));
        for (NicRule r : bad) {
            AgentException e = failure(agent().installNicRules(batch(rule(1, 8, c), r)));
            assertEquals(r + e.getMessage(), Code.INVALID_ARGUMENT, e.code());
            assertEquals(Set.of(), ruleIds());
        }
        assertFails(Code.INVALID_ARGUMENT, agent().installNicRules(batch()));
    }

    @Test
    public void aBatchOverflowingTheNicsRuleTableIsResourceExhausted() throws Exception {
        int max = ok(agent().getResources()).getNicsList().stream().filter(n -> n.getName().equals(nic))
                .findFirst().get().getMaxNicRules();
        ok(agent().installNicRules(batch(rule(1, 7, workers.get(0)))));
        NicRule[] full = new NicRule[max];
        for (int i = 0; i < max; i++) {
            full[i] = rule(100 + i, 8, workers.get(0));
        }
        assertFails(Code.RESOURCE_EXHAUSTED, agent().installNicRules(batch(full)));
        assertEquals(Set.of(1L), ruleIds());
    }

    @Test
    public void removingAnUnknownRuleIsNotFoundAndRemovesNothing() throws Exception {
        int c = workers.get(0);
        ok(agent().installNicRules(batch(rule(1, 7, c), rule(2, 8, c))));
        assertFails(Code.NOT_FOUND, agent().removeNicRules(List.of(1L, 99L)));
        assertEquals(Set.of(1L, 2L), ruleIds());
        assertFails(Code.INVALID_ARGUMENT, agent().removeNicRules(List.of()));
        assertFails(Code.INVALID_ARGUMENT, agent().removeNicRules(List.of(1L, 1L)));
        assertEquals(Set.of(1L, 2L), ruleIds());
    }

    /**
     * NIC rules written for a chain carry its owner token as pipelines do, in the same per-chain table: a late former
     * owner (token 5, the new owner's 6) can neither install nor remove; an unnamed chain is unfenced.
     */
    @Test
    public void aNicRuleWriteWithAnOlderOwnerTokenIsAbortedAndChangesNothing() throws Exception {
        int c = workers.get(0); // a pipeline id of its own: the real agent keeps tokens for its lifetime
        ok(agent().installNicRules(batch(rule(1, 7, c)).toBuilder().setPipelineId("fenced").setOwnerToken(6).build()));
        AgentException e = failure(agent().removeNicRules(NicRuleIds.newBuilder().addIds(1).setPipelineId("fenced")
                .setOwnerToken(5).build()));
        assertEquals(Code.ABORTED, e.code());
        assertTrue(e.getMessage(), e.getMessage().endsWith("RemoveNicRules of pipeline fenced refused: owner token 5 "
                + "is older than 6, the newest this agent has seen for it (another controller instance owns the chain)"));
        assertFails(Code.ABORTED, agent().installNicRules(batch(rule(2, 8, c)).toBuilder().setPipelineId("fenced")
                .setOwnerToken(5).build()));
        assertEquals(Set.of(1L), ruleIds());
        // the chain's token is one: its pipeline calls are fenced by it too
        assertFails(Code.ABORTED, agent().deployPipeline(pipeline("fenced", group("g0", 9, c, PASS)).toBuilder()
                .setOwnerToken(5).build()));
        assertEquals(1, ok(agent().removeNicRules(List.of(1L))).getApplied());
        assertEquals(Set.of(), ruleIds());
    }

    @Test
    public void listingTheRulesOfANicWithoutATableIsNotFound() throws Exception {
        assertFails(Code.NOT_FOUND, agent().listNicRules("nonic0"));
    }
}
