package org.metron.app.impl;

import org.junit.Before;
import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.NicRule;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Restart recovery over the in-memory agents: what comes back, when, and what is left alone. */
public class AgentWatchTest {
    private static final ChainId WEB = ChainId.of("web");
    private static final DeviceId SERVER0 = DeviceId.deviceId(Fixtures.serverId(0));

    private World w;
    private AgentWatch watch;
    private TestAgent agent0;
    private TestAgent agent1;

    @Before
    public void setUp() {
        w = new World(2, Fixtures.synthesis(), 42);
        Duration t = Duration.ofSeconds(2);
        watch = new AgentWatch(w.servers, new ServerRecovery(w.store, w.manager, t), t);
        agent0 = w.agents.get(0);
        agent1 = w.agents.get(1);
    }

    private static long count(TestAgent a, String rpc) {
        return Collections.frequency(a.calls(), rpc);
    }

    @Test
    public void aRestartedAgentGetsTheSamePipelineAndNicRulesBackOnce() {
        w.manager.submit(Fixtures.chainJson("web"));
        assertEquals(SERVER0, w.manager.placement(WEB).get().server().get());
        DeployPipelineRequest pipeline = agent0.pipelines().get("web");
        Map<Long, NicRule> rules = Map.copyOf(agent0.nicRules());
        assertEquals(2, rules.size());
        int switchRules = w.switches.total();
        assertEquals("first sight: both compared, nothing missing", Set.of(SERVER0, DeviceId.deviceId(
                Fixtures.serverId(1))), watch.check());
        assertEquals(1, count(agent0, "DeployPipeline"));

        agent0.restart();
        assertTrue(agent0.pipelines().isEmpty());
        assertEquals(Set.of(SERVER0), watch.check());
        assertEquals(pipeline, agent0.pipelines().get("web"));
        assertEquals(rules, agent0.nicRules());
        assertEquals(switchRules, w.switches.total());
        assertEquals(ChainState.ACTIVE, w.manager.chain(WEB).get().state());
        // the other server was only asked for its health
        assertEquals(0, count(agent1, "DeployPipeline") + count(agent1, "InstallNicRules"));

        // same boot id next round: not compared again, nothing installed twice
        assertEquals(Set.of(), watch.check());
        assertEquals(2, count(agent0, "DeployPipeline"));
        assertEquals(2, count(agent0, "InstallNicRules"));
    }

    @Test
    public void aWatchOfSomeServersAsksOnlyTheirAgents() {
        watch.watching(SERVER0::equals); // in ONOS: the servers whose device this node masters
        assertEquals(Set.of(SERVER0), watch.check());
        assertEquals(1, count(agent0, "Health"));
        assertEquals(0, count(agent1, "Health"));
    }

    @Test
    public void anAgentBackFromUnreachableIsComparedAndMissingPiecesRestored() {
        watch.check();
        w.manager.submit(Fixtures.chainJson("web"));
        NicRule kept = agent0.nicRules().values().iterator().next();
        agent0.unreachable(true);
        assertEquals(Set.of(), watch.check());
        agent0.unreachable(false);
        // same boot id, but it lost the pipeline and one NIC rule while out of reach
        agent0.removePipeline("web").join();
        agent0.removeNicRules(java.util.List.of(kept.getId())).join();
        assertEquals(1, agent0.nicRules().size());
        assertEquals(Set.of(SERVER0), watch.check());
        assertTrue(agent0.pipelines().containsKey("web"));
        assertEquals(kept, agent0.nicRules().get(kept.getId()));
        assertEquals(2, agent0.nicRules().size());
    }

    @Test
    public void aFailedRecoveryIsRetriedUntilItSucceeds() {
        w.manager.submit(Fixtures.chainJson("web"));
        watch.check();
        agent0.restart().failDeploy(true);
        assertEquals(Set.of(), watch.check());
        assertFalse(agent0.pipelines().containsKey("web"));
        agent0.failDeploy(false);
        assertEquals(Set.of(SERVER0), watch.check());
        assertTrue(agent0.pipelines().containsKey("web"));
        // the NIC rules installed by the failed round are not installed twice (the agent would refuse)
        assertEquals(2, agent0.nicRules().size());
    }

    @Test
    public void aChainDeletedWhileItsAgentWasDownIsNotBroughtBackAndGoesWhenTheAgentReturns() {
        w.manager.submit(Fixtures.chainJson("web"));
        watch.check();
        agent0.unreachable(true);
        assertEquals(ChainState.REMOVING, w.manager.remove(WEB).get().state());
        agent0.unreachable(false).restart();
        watch.check();
        // the restarted agent is not given the deleted chain again, and the removal ends: nothing is left
        assertTrue(agent0.pipelines().isEmpty());
        assertTrue(agent0.nicRules().isEmpty());
        assertFalse(w.manager.chain(WEB).isPresent());
        assertFalse(w.manager.placement(WEB).isPresent());
    }

    @Test
    public void removalAfterARestartSucceedsAndReleasesEverything() {
        w.manager.submit(Fixtures.chainJson("web"));
        agent0.restart();
        w.manager.remove(WEB);
        assertFalse(w.manager.chain(WEB).isPresent());
        assertFalse(w.manager.placement(WEB).isPresent());
        assertTrue(w.manager.tags().isEmpty());
        assertEquals(0, w.switches.total());
        // what it held is free again: the same chain deploys on the same server
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("web")).state());
    }

    @Test
    public void removalWithSomeNicRulesGoneRemovesTheRest() {
        w.manager.submit(Fixtures.chainJson("web"));
        long lost = agent0.nicRules().keySet().iterator().next();
        agent0.removeNicRules(java.util.List.of(lost)).join();
        w.manager.remove(WEB);
        assertTrue(agent0.nicRules().isEmpty());
        assertTrue(agent0.pipelines().isEmpty());
    }

    @Test
    public void anUnreachableServerDoesNotHoldUpTheOthers() {
        w.manager.submit(Fixtures.chainJson("web"));
        watch.check();
        agent1.unreachable(true);
        agent0.restart();
        assertEquals(Set.of(SERVER0), watch.check());
        assertTrue(agent0.pipelines().containsKey("web"));
    }

    @Test
    public void aNonPositiveIntervalIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> watch.start(Duration.ZERO));
        assertTrue(e.getMessage(), e.getMessage().contains("interval"));
    }

    @Test
    public void anAgentBackWithinTheDeadlineKeepsItsChainAndOneSilentPastItHasItMoved() throws Exception {
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId server1 = DeviceId.deviceId(Fixtures.serverId(1));
        try (ServerFailover failover = new ServerFailover(w.manager, Duration.ofMillis(1000), id -> true)) {
            watch.failover(failover);
            watch.check();
            agent0.unreachable(true);
            watch.check(); // suspected: readied on the other server, its deadline runs
            agent0.unreachable(false);
            watch.check(); // back within it: called off
            Thread.sleep(1200);
            assertEquals("back within the deadline: it stays", SERVER0, w.manager.placement(WEB).get().server().get());
            agent0.unreachable(true);
            watch.check();
            assertEquals("not before the deadline", SERVER0, w.manager.placement(WEB).get().server().get());
            failover.awaitMove(SERVER0, Duration.ofSeconds(10));
            assertEquals("moved once the deadline passed", server1, w.manager.placement(WEB).get().server().get());
            assertTrue(agent1.pipelines().containsKey("web"));
        }
    }

    @Test
    public void theEmbeddedHostsFailoverMovesTheChainOffTheLostServer() throws Exception {
        w.manager.submit(Fixtures.chainJson("web"));
        assertEquals(SERVER0, w.manager.placement(WEB).get().server().get());
        try (ServerFailover failover = new ServerFailover(w.manager, Duration.ZERO, id -> true)) {
            watch.failover(failover);
            agent0.unreachable(true);
            watch.check();
            failover.awaitMove(SERVER0, Duration.ofSeconds(10));
        }
        assertEquals(DeviceId.deviceId(Fixtures.serverId(1)), w.manager.placement(WEB).get().server().get());
        assertTrue(agent1.pipelines().containsKey("web"));
    }
}
