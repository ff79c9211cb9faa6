package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.Fixtures;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Recovery of a split a crashed controller left half done (the operation journal), by the chain's owner only,
 * and a split chain restored as split on an agent that lost its pipeline; against a real metron-agent
 * ({@link ScalingFixture}).
 */
public class ScalingRecoveryTest extends ScalingFixture {
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
}
