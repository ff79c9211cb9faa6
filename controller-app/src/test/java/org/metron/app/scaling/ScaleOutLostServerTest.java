package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.impl.AgentWatch;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.impl.ServerFailover;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.store.TagKey;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowRule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * The server a class slice was scaled out to is lost for good, detected by the agent watch, with agents of its
 * own (a test starts and kills them), besides {@link ScaleOutFixture}'s two.
 */
public class ScaleOutLostServerTest extends ScaleOutFixture {
    /**
     * The server a class slice was scaled out to is lost for good: its agent SIGKILLed and not started again. The
     * agent watch suspects it and its failover (deadline 0 here) has {@link ChainManager#serverLost} move it, which
     * hands it to scaling
     * ({@link ScalingManager} registered as the chain manager's {@code ServerLoss}, as both hosts do): the slice
     * comes back into g0 on the chain's server without a call to the dead agent — g0 holds the whole class again
     * (the agent lists it so), the offload rules are the original ones toward the chain's server, the transit and
     * return rules to the lost server are gone, its tag released; the flow made there is lost and the history
     * and the chain's reason say so, with the flows the group held in the last report of its server. The switch
     * refuses the first merge back: it rolls back and is tried again, and the second brings the slice back. When
     * that server's agent comes back later (empty), the recovery puts nothing of the chain there.
     */
    @Test
    public void aLostOtherServerGivesItsGroupBackToTheChainsServerWithoutItsFlows() throws Exception {
        RealAgent[] agents = new RealAgent[2];
        int[] ports = new int[2];
        List<GrpcAgentClient> clients = new ArrayList<>();
        ScalingManager scaler = null;
        ServerFailover failover = null;
        try {
            for (int i = 0; i < 2; i++) {
                agents[i] = RealAgent.startOnPort("scaleout-lost" + i, 0);
                ports[i] = portOf(agents[i]);
                // a loaded machine's agent may take a while; the dead one's calls are not waited for (none made)
                clients.add(GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(ports[i])
                        .deadline(Duration.ofSeconds(15)).build()));
            }
            Rig rig = new Rig("scaleout-lost", clients.get(0), clients.get(1));
            Duration t = Duration.ofSeconds(10);
            scaler = new ScalingManager(rig.store, rig.factory, rig.servers, rig.crashing, rig.manager, rig.manager,
                    Fixtures.APP, t, ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS, rig.leadership,
                    System::currentTimeMillis, java.util.Optional.empty(), IngressWatch.INTERVAL_MS,
                    java.util.Optional.of(new RulePlanner(Fixtures.APP, rig.network)));
            rig.manager.onServerLost(scaler);
            failover = new ServerFailover(rig.manager, Duration.ZERO, id -> true);
            AgentWatch watch = new AgentWatch(rig.servers, new ServerRecovery(rig.store, rig.manager, t), t)
                    .failover(failover);
            assertEquals(Set.of(rig.home.id(), rig.away.id()), watch.check());
            GroupAssignment g0 = rig.group("g0");
            PortNumber homePort = rig.offloadRulesFor(g0.tag()).values().iterator().next();
            Set<Object> original = rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id)
                    .collect(Collectors.toSet());
            int rules = rig.switches.total();

            GroupAssignment moved = rig.sliceOut();
            rig.importFlow(rig.away, "g0.1", 5003, 3003); // a flow the other server made
            assertEquals(Map.of(5001, 2001, 5003, 3003), rig.flows(rig.away, "g0.1"));
            assertFalse(rig.s2Rules(rig.awayPort()).isEmpty());
            assertTrue(rig.switches.rules(Fixtures.D2).stream().anyMatch(r -> RuleRetagger.matchesGroup(r,
                    moved.tag())));
            // the last report of the other server (a real one) is what the history names
            scaler.monitor().onReport(rig.away.id(), rig.away.agent().getStats("").get(10, TimeUnit.SECONDS));
            int awayIndex = rig.away.agent() == clients.get(0) ? 0 : 1;
            agents[awayIndex].kill();
            // the switch refuses the first merge back's re-tag: rolled back, the slice still placed on the lost
            // server (its traffic lost); scaling tries again RETRY_FIRST_MS later, and that one brings it back
            rig.crashing.crashOn = Fixtures.D1;
            rig.crashing.failInstead = true;

            long lostAt = System.currentTimeMillis();
            assertEquals("the other server is lost (nothing to recover)", Set.of(), watch.check());
            failover.awaitMove(rig.away.id(), Duration.ofSeconds(60));
            long firstMs = System.currentTimeMillis() - lostAt;
            assertTrue("the refused merge back leaves the slice there", rig.placement().groups().stream()
                    .anyMatch(GroupAssignment::remote));
            List<ScalingEvent> first = rig.scaling.history(rig.chain);
            assertEquals(first.toString(), ScalingEvent.Outcome.ROLLED_BACK, first.get(first.size() - 1).outcome());
            long retryBy = System.currentTimeMillis() + ScalingManager.RETRY_FIRST_MS + 20_000;
            while (rig.placement().groups().stream().anyMatch(GroupAssignment::remote)
                    && System.currentTimeMillis() < retryBy) {
                Thread.sleep(50);
            }
            long tookMs = System.currentTimeMillis() - lostAt;

            assertTrue(rig.placement().toString(), rig.placement().groups().stream().noneMatch(GroupAssignment::remote));
            assertEquals(List.of("g0"), rig.placement().groups().stream().map(GroupAssignment::groupId)
                    .collect(Collectors.toList()));
            assertEquals(List.of(0, 1, 2, 3), rig.group("g0").classIds());
            assertTrue("class 0 whole again", rig.group("g0").slices().isEmpty());
            List<GroupStatus> home = rig.groups(rig.home);
            assertEquals(1, home.size());
            assertEquals(List.of(0, 1, 2, 3), home.get(0).getClassIdsList());
            Map<Integer, Integer> flows = rig.flows(rig.home, "g0");
            assertEquals("the flows made on the chain's server stay", Integer.valueOf(2000), flows.get(5000));
            assertFalse("the flow made on the lost server is gone with it", flows.containsKey(5003));
            // the original offload rules (the slice joined back), all toward the chain's server
            assertEquals(original, rig.switches.rules(Fixtures.D1).stream().map(FlowRule::id)
                    .collect(Collectors.toSet()));
            assertTrue(rig.offloadRulesFor(moved.tag()).isEmpty());
            assertTrue(rig.offloadRulesFor(g0.tag()).values().stream().allMatch(homePort::equals));
            assertTrue("no return rule from the lost server", rig.s2Rules(rig.awayPort()).isEmpty());
            assertTrue(rig.switches.rules(Fixtures.D2).stream().noneMatch(r -> RuleRetagger.matchesGroup(r,
                    moved.tag())));
            assertEquals(rules, rig.switches.total());
            assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules()
                    .size());
            assertFalse(rig.store.tags().get(new TagKey(moved.tag())).isPresent());
            assertTrue(rig.scaling.inProgress().isEmpty());
            List<ScalingEvent> history = rig.scaling.history(rig.chain);
            ScalingEvent e = history.stream().filter(x -> x.reason().contains("lost")
                    && x.outcome() == ScalingEvent.Outcome.DONE).findFirst().orElseThrow(
                    () -> new AssertionError(history.toString()));
            assertEquals(e.detail(), ScalingEvent.Outcome.DONE, e.outcome());
            assertEquals(ScalingDecision.Kind.MERGE, e.kind());
            assertEquals(List.of("g0", "g0.1"), e.groups());
            assertTrue(e.reason(), e.reason().startsWith("server " + rig.away.id() + " lost: group g0.1"));
            assertTrue(e.reason(), e.reason().contains("flow state is lost with the server (2 flows at its last "
                    + "report"));
            assertTrue(e.steps(), e.steps().contains("the other server is lost"));
            assertTrue(rig.manager.chain(rig.chain).get().reason(), rig.manager.chain(rig.chain).get().reason()
                    .contains("server " + rig.away.id() + " lost"));
            assertEquals(ChainState.ACTIVE, rig.manager.chain(rig.chain).get().state());
            System.out.printf("lost server handled in %d ms: the first try refused after %d ms, the retry DONE "
                    + "(steps: %s)%n", tookMs, firstMs, e.steps());

            // its agent comes back, empty: nothing of the chain is placed there any more, so nothing is deployed
            agents[awayIndex].close();
            agents[awayIndex] = RealAgent.startOnPort("scaleout-lost" + awayIndex + "b", ports[awayIndex]);
            Set<DeviceId> recovered = Set.of();
            long deadline = System.currentTimeMillis() + 30_000;
            while (!recovered.contains(rig.away.id()) && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                recovered = watch.check();
            }
            assertEquals(Set.of(rig.away.id()), recovered);
            assertTrue("the merged-back group is not resurrected", rig.groups(rig.away).isEmpty());
            assertEquals(List.of(0, 1, 2, 3), rig.groups(rig.home).get(0).getClassIdsList());
            rig.manager.remove(rig.chain);
            removeChains();
            rigs.remove(rig);
        } finally {
            if (failover != null) {
                failover.close();
            }
            if (scaler != null) {
                scaler.close();
            }
            for (GrpcAgentClient c : clients) {
                c.close();
            }
            for (RealAgent a : agents) {
                if (a != null) {
                    a.close();
                }
            }
        }
    }
}
