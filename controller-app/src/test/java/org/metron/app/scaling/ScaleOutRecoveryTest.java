package org.metron.app.scaling;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.impl.AgentWatch;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.AtOnce;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Scale-out between two real metron-agents ({@link ScaleOutFixture}) when something fails: rollback on a refused
 * re-tag, recovery after a controller crash at it, the operation journal across owners, and the other server's
 * agent restarting with the scaled-out group's flows in its checkpoint, and restores racing for it.
 */
public class ScaleOutRecoveryTest extends ScaleOutFixture {
    @Test
    public void aRefusedReTagRollsTheOtherServerBack() throws Exception {
        Rig rig = new Rig("scaleout-refused");
        Placement before = rig.placement();
        int rules = rig.switches.total();
        rig.crashing.crashOn = Fixtures.D1;
        rig.crashing.failInstead = true;
        try {
            rig.executor().split(rig.chain, "g0", Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test",
                    System.currentTimeMillis());
            fail("the refused re-tag should fail the scale-out");
        } catch (MetronException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("(rolled back)"));
        }
        assertEquals(before, rig.placement());
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals(rules, rig.switches.total());
        assertEquals(1, rig.store.tags().snapshot().size());
        assertEquals(ScalingEvent.Outcome.ROLLED_BACK, rig.scaling.history(rig.chain).get(0).outcome());
    }

    @Test
    public void aControllerThatStoppedAtTheReTagCompletesTheScaleOutOnRestart() throws Exception {
        Rig rig = new Rig("scaleout-crash");
        rig.importFlow(rig.home, "g0", 5000, 2000);
        rig.crashing.crashOn = Fixtures.D1;
        try {
            rig.executor().split(rig.chain, "g0", Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test",
                    System.currentTimeMillis());
            fail("the controller should have crashed");
        } catch (IllegalStateException expected) {
            // the journal holds the operation at SWITCHED
        }
        assertEquals(ScalingOperation.Step.SWITCHED, rig.scaling.inProgress().iterator().next().step());

        List<ScalingEvent> recovered = rig.executor().recover(c -> true);

        assertEquals(1, recovered.size());
        assertEquals(recovered.get(0).detail(), ScalingEvent.Outcome.DONE, recovered.get(0).outcome());
        GroupAssignment moved = rig.group("g0.1");
        assertTrue(moved.remote());
        assertEquals(2, rig.offloadRulesFor(moved.tag()).size());
        assertEquals(Map.of(5000, 2000), rig.flows(rig.away, "g0.1"));
        assertEquals(rig.switches.total(), rig.store.installed().get(rig.chain).get().value().switchRules().size());
        assertEquals(ScalingEvent.Outcome.DONE, rig.executor().merge(rig.chain, "g0", "g0.1", "test",
                System.currentTimeMillis()).outcome());
    }

    /** What identifies a server's groups of the chain as its agent reports them: id, tag, core, classes. */
    private static List<String> described(List<GroupStatus> groups) {
        return groups.stream().map(g -> g.getGroupId() + " tag " + g.getTag().getValue() + " core " + g.getCore()
                + " classes " + g.getClassIdsList()).collect(Collectors.toList());
    }

    private static GrpcAgentClient clientOf(int port) {
        return GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(port)
                .deadline(Duration.ofSeconds(5)).build());
    }

    /**
     * The next owner's rollback of a scale-out its previous owner left before the re-tag cannot remove the transit
     * rules (the switch's master died with that owner): the operation stays journalled with no history entry, and
     * a later try, once the switch accepts, rolls it back and records it once. Before, the rollback dropped the
     * journal entry whatever it left: the 3-node cluster test saw the chain with neither an operation in progress
     * nor a history entry, and the rules stayed.
     */
    @Test
    public void aRollbackThatLeavesRulesKeepsTheOperationJournalledUntilATryLaterUndoesIt() throws Exception {
        Rig rig = new Rig("scaleout-left");
        Placement before = rig.placement();
        int rules = rig.switches.total();
        rig.crashing.crashOn = Fixtures.D1;
        assertThrows(IllegalStateException.class, () -> rig.executor().split(rig.chain, "g0",
                Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test", System.currentTimeMillis()));
        ScalingOperation op = rig.scaling.inProgress().iterator().next();
        assertFalse("the scale-out adds transit rules", op.transitAdded().isEmpty());
        assertTrue(rig.switches.total() > rules);
        // its owner was killed after the transit rules, before it recorded the re-tag step
        rig.scaling.operations().put(rig.chain, op.at(ScalingOperation.Step.PIPELINE));
        rig.crashing.refuseRemoves = true;

        assertTrue(rig.executor().recover(c -> true).isEmpty());
        assertEquals(ScalingOperation.Step.PIPELINE, rig.scaling.inProgress().iterator().next().step());
        assertTrue(rig.scaling.history(rig.chain).isEmpty());

        rig.crashing.refuseRemoves = false;
        List<ScalingEvent> again = rig.executor().recover(c -> true);

        assertEquals(1, again.size());
        assertEquals(again.get(0).detail(), ScalingEvent.Outcome.ROLLED_BACK, again.get(0).outcome());
        assertTrue(rig.scaling.inProgress().isEmpty());
        assertEquals(again, rig.scaling.history(rig.chain));
        assertEquals(before, rig.placement());
        assertEquals(rules, rig.switches.total());
        assertTrue(rig.groups(rig.away).isEmpty());
    }

    /**
     * An owner that recorded its operation's end and died before removing its journal entry: the next owner finds
     * the entry in the history and only removes the journal entry (nothing run twice, no second entry).
     */
    @Test
    public void anOperationWhoseEndWasRecordedIsOnlyRemovedFromTheJournal() throws Exception {
        Rig rig = new Rig("scaleout-ended");
        rig.crashing.crashOn = Fixtures.D1;
        assertThrows(IllegalStateException.class, () -> rig.executor().split(rig.chain, "g0",
                Map.of(0, 1.0, 1, 1.0, 2, 1.0, 3, 1.0), "test", System.currentTimeMillis()));
        ScalingOperation op = rig.scaling.inProgress().iterator().next();
        assertEquals(ScalingEvent.Outcome.DONE, rig.executor().recover(c -> true).get(0).outcome());
        Placement after = rig.placement();
        int rules = rig.switches.total();
        rig.scaling.operations().put(rig.chain, op);

        assertTrue(rig.executor().recover(c -> true).isEmpty());

        assertTrue(rig.scaling.inProgress().isEmpty());
        assertEquals(1, rig.scaling.history(rig.chain).size());
        assertEquals(after, rig.placement());
        assertEquals(rules, rig.switches.total());
    }

    /**
     * The agent of the server a class slice was scaled out to crashes (SIGKILL) and starts again on its port with
     * its state directory: the agent watch sees its new boot id and {@link ServerRecovery} deploys the scaled-out
     * group there again (same group, tag, core, classes, slice), filled with its flows from the agent's last
     * checkpoint; the switch rules still send the slice there, and the chain merges back with those flows.
     */
    @Test
    public void aRestartedAgentOfTheOtherServerGetsTheScaledOutGroupBackWithItsFlows() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("metron-scaleout-state");
        RealAgent[] agents = new RealAgent[2];
        int[] ports = new int[2];
        List<GrpcAgentClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                agents[i] = RealAgent.startOnPort("scaleout-restart" + i, 0, "--state-dir",
                        dir.resolve("agent" + i).toString(), "--state-checkpoint-ms", "100");
                ports[i] = portOf(agents[i]);
                clients.add(clientOf(ports[i]));
            }
            Rig rig = new Rig("scaleout-restart", clients.get(0), clients.get(1));
            Duration t = Duration.ofSeconds(10);
            AgentWatch watch = new AgentWatch(rig.servers, new ServerRecovery(rig.store, rig.manager, t), t);
            assertEquals("the first round compares both servers", Set.of(rig.home.id(), rig.away.id()),
                    watch.check());
            GroupAssignment moved = rig.sliceOut();
            rig.importFlow(rig.away, "g0.1", 5003, 3003); // a flow the other server made
            List<String> away = described(rig.groups(rig.away));
            List<String> home = described(rig.groups(rig.home));
            assertEquals(away.toString(), 1, away.size());
            Map<Integer, Integer> flows = rig.flows(rig.away, "g0.1");
            assertEquals(Map.of(5001, 2001, 5003, 3003), flows);
            Set<FlowRule> switchRules = new java.util.HashSet<>(rig.switches.rules(Fixtures.D1));
            switchRules.addAll(rig.switches.rules(Fixtures.D2));
            int awayIndex = rig.away.agent() == clients.get(0) ? 0 : 1;
            java.nio.file.Path stateDir = dir.resolve("agent" + awayIndex);
            // a checkpoint after the last import: the group's file is (re)written every 100 ms
            long deadline = System.currentTimeMillis() + 10_000;
            long since = System.currentTimeMillis();
            while (System.currentTimeMillis() < deadline && newestWrite(stateDir) <= since + 200) {
                Thread.sleep(50);
            }
            assertTrue(agents[awayIndex].log(), newestWrite(stateDir) > since + 200);

            agents[awayIndex].kill();
            assertTrue("the agent lost the group", watch.check().isEmpty());
            agents[awayIndex].close();
            agents[awayIndex] = RealAgent.startOnPort("scaleout-restart" + awayIndex + "b", ports[awayIndex],
                    "--state-dir", stateDir.toString(), "--state-checkpoint-ms", "100");
            Set<DeviceId> recovered = Set.of();
            deadline = System.currentTimeMillis() + 30_000;
            while (!recovered.contains(rig.away.id()) && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                recovered = watch.check();
            }
            assertEquals(agents[awayIndex].log(), Set.of(rig.away.id()), recovered);
            assertEquals(agents[awayIndex].log(), away, described(rig.groups(rig.away)));
            assertEquals("the flows of the last checkpoint\n" + agents[awayIndex].log(), flows,
                    rig.flows(rig.away, "g0.1"));
            assertEquals("the chain's server was not touched", home, described(rig.groups(rig.home)));
            Set<FlowRule> after = new java.util.HashSet<>(rig.switches.rules(Fixtures.D1));
            after.addAll(rig.switches.rules(Fixtures.D2));
            assertEquals("the switches still send the slice to the other server", switchRules, after);
            assertEquals(Set.of(), watch.check());

            ScalingEvent m = rig.executor().merge(rig.chain, "g0", "g0.1", "test", System.currentTimeMillis());
            assertEquals(m.detail(), ScalingEvent.Outcome.DONE, m.outcome());
            assertEquals(Map.of(5000, 2000, 5001, 2001, 5003, 3003), rig.flows(rig.home, "g0"));
            rig.manager.remove(rig.chain);
            removeChains();
            rigs.remove(rig);
        } finally {
            for (GrpcAgentClient c : clients) {
                c.close();
            }
            for (RealAgent a : agents) {
                if (a != null) {
                    a.close();
                }
            }
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /**
     * The agent of the server a class slice was scaled out to restarts (empty) and three restores of that server
     * run at once (the agent watch's round, the device listener's "available again", a DEGRADED chain's
     * reconcile): the scaled-out group is deployed there once, by one of them, as it was, and none fails. Before,
     * each listed the agent's pipelines before taking the chain's lock, and those that listed before the first
     * deployed deployed again: DeployPipeline ALREADY_EXISTS (two of the three, 5 runs of 5 on 28164fa).
     */
    @Test
    public void restoresRacingForTheOtherServersRestartedAgentDeployItsGroupOnce() throws Exception {
        RealAgent[] agents = new RealAgent[2];
        int[] ports = new int[2];
        List<GrpcAgentClient> clients = new ArrayList<>();
        Rig rig = null;
        try {
            for (int i = 0; i < 2; i++) {
                agents[i] = RealAgent.startOnPort("scaleout-race" + i, 0);
                ports[i] = portOf(agents[i]);
                clients.add(clientOf(ports[i]));
            }
            rig = new Rig("scaleout-race", clients.get(0), clients.get(1));
            ServerRecovery recovery = new ServerRecovery(rig.store, rig.manager, Duration.ofSeconds(10));
            rig.sliceOut();
            List<String> away = described(rig.groups(rig.away));
            List<String> home = described(rig.groups(rig.home));
            assertEquals(away.toString(), 1, away.size());
            int awayIndex = rig.away.agent() == clients.get(0) ? 0 : 1;
            agents[awayIndex].close();
            agents[awayIndex] = RealAgent.startOnPort("scaleout-race" + awayIndex + "b", ports[awayIndex]);
            long deadline = System.currentTimeMillis() + 30_000;
            while (!answersEmpty(rig, rig.away)) { // the controller's client reconnects on its own, after a backoff
                assertTrue(agents[awayIndex].log(), System.currentTimeMillis() < deadline);
                Thread.sleep(100);
            }
            MetronServer other = rig.away;
            Callable<List<ChainId>> restore = () -> recovery.restore(other);

            List<CompletableFuture<List<ChainId>>> results = AtOnce.run(Duration.ofSeconds(60),
                    List.of(restore, restore, restore));

            assertEquals(agents[awayIndex].log(), List.of(), AtOnce.failures(results));
            assertEquals("one restore deployed it, the others found it there", List.of(List.of(rig.chain),
                    List.of(), List.of()), results.stream().map(CompletableFuture::join)
                    .sorted(java.util.Comparator.comparing(List::isEmpty)).collect(Collectors.toList()));
            assertEquals(agents[awayIndex].log(), away, described(rig.groups(rig.away)));
            assertEquals("the chain's server was not touched", home, described(rig.groups(rig.home)));
            removeChain(rig);
        } finally {
            rigs.remove(rig); // removed above; or failed, and what the agents hold goes with them
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

    /** Whether {@code s}'s agent answers and holds nothing of the rig's chain. */
    private static boolean answersEmpty(Rig rig, MetronServer s) {
        try {
            return rig.groups(s).isEmpty();
        } catch (Exception e) {
            return false;
        }
    }

    /** When a file in {@code dir} was last written (0 when none). */
    private static long newestWrite(java.nio.file.Path dir) throws Exception {
        if (!java.nio.file.Files.isDirectory(dir)) {
            return 0;
        }
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(dir)) {
            return files.mapToLong(f -> f.toFile().lastModified()).max().orElse(0);
        }
    }
}
