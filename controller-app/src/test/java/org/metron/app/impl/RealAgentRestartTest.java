package org.metron.app.impl;

import org.junit.After;
import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.PipelineStatus;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.AtOnce;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.app.testing.TestVeth;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.TrafficClass;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/**
 * A real metron-agent process is killed and started again on the same port: the controller's client
 * reconnects, the watch sees the new boot id and the pipeline comes back with the same groups, tags and cores,
 * the NIC rules with the same ids and contents; the chain is then removed cleanly. Restores that race for it
 * install each of them once.
 */
public class RealAgentRestartTest {
    private static final DeviceId SERVER = DeviceId.deviceId("metron:real");
    private RealAgent agent;
    private GrpcAgentClient client;
    private TestVeth veth;
    private int port;
    private MetronServer server;
    private final TestSwitches switches = new TestSwitches();
    private ChainManager manager;
    private ServerRecovery recovery;
    private AgentWatch watch;
    /** What the agent held once the chain was deployed: its pipeline's groups, its NIC rules. */
    private Set<String> groupsBefore;
    private Set<String> rulesBefore;

    @After
    public void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (agent != null) {
            agent.close();
        }
        if (veth != null) {
            veth.close();
        }
    }

    static CompiledChain compiled(String name) {
        return new CompiledChain(name, org.metron.synth.TargetProfile.OPENFLOW13,
                List.of(new TrafficClass(0, List.of("udp"), 0, List.of(), false, "", "pass")),
                List.of(new ClassGroup(0, List.of(0), "input -> [0]output;", "", true)),
                List.of(OffloadRule.of(1, RuleMatch.builder().ethType(0x0800).ipProto(17).build(),
                        RuleAction.toServer(0))),
                List.of("fw.out0"), new SynthStats(1, 1, 1, 0, Map.of()));
    }

    /** What identifies a running pipeline's groups: id, tag, core, classes. */
    private static Set<String> groups(GrpcAgentClient c) throws Exception {
        List<PipelineStatus> ps = c.listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList();
        return ps.stream().flatMap(p -> p.getGroupsList().stream().map((GroupStatus g) -> p.getPipelineId() + "/"
                + g.getGroupId() + " tag " + g.getTag().getValue() + " core " + g.getCore() + " classes "
                + g.getClassIdsList())).collect(Collectors.toSet());
    }

    private static Set<String> nicRules(GrpcAgentClient c) throws Exception {
        return c.listNicRules("").get(10, TimeUnit.SECONDS).getRulesList().stream().map(r -> r.toString())
                .collect(Collectors.toSet());
    }

    @Test
    public void aKilledAndRestartedAgentGetsItsPipelineBack() throws Exception {
        restartCycle(0);
    }

    /** A kernel interface the agent steers by tag (AF_PACKET fanout) has a NIC rule table: rules come back. */
    @Test
    public void aKilledAndRestartedAgentGetsItsNicRulesBack() throws Exception {
        veth = TestVeth.create("mrt");
        restartCycle(1, "--fanout", veth.agentSide());
    }

    /**
     * Three restores of a restarted agent's server at once, as its three callers may run them when they notice the
     * restart together (the agent watch's round, the device listener's "available again", a DEGRADED chain's
     * reconcile): each decides what is missing under the chain's lock from a fresh read of the agent, so the NIC
     * rule and the pipeline are installed once, by one of them, and none fails. Before, each listed the agent once
     * before taking the lock, and those that listed before the first installed installed again: the agent refused
     * with ALREADY_EXISTS (the InstallNicRules of two of the three, 5 runs of 5 on 28164fa).
     */
    @Test
    public void restoresRacingForARestartedAgentInstallEachThingOnce() throws Exception {
        veth = TestVeth.create("mrr");
        String[] options = {"--fanout", veth.agentSide()};
        deploy(1, options);
        restartAgent(options);
        Callable<List<ChainId>> restore = () -> recovery.restore(server);

        List<CompletableFuture<List<ChainId>>> results = AtOnce.run(Duration.ofSeconds(60),
                List.of(restore, restore, restore));

        assertEquals(agent.log(), List.of(), AtOnce.failures(results));
        assertEquals("one restore installed it, the others found it there", List.of(List.of(ChainId.of("real")),
                List.of(), List.of()), results.stream().map(CompletableFuture::join)
                .sorted(Comparator.comparing(List::isEmpty)).collect(Collectors.toList()));
        assertEquals(agent.log(), groupsBefore, groups(client));
        assertEquals(agent.log(), rulesBefore, nicRules(client));
        assertEquals("the watch sees the new boot id and finds it all there", Set.of(SERVER), watch.check());
        removeChain();
    }

    /** Deploys a chain, restarts the agent, waits for the watch to restore it, removes it. */
    private void restartCycle(int nicRuleCount, String... agentOptions) throws Exception {
        deploy(nicRuleCount, agentOptions);
        long bootBefore = client.health().get(10, TimeUnit.SECONDS).getBootId();
        int switchRules = switches.total();
        restartAgent(agentOptions);
        long deadline = System.currentTimeMillis() + 30_000;
        Set<DeviceId> recovered = Set.of();
        while (recovered.isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
            recovered = watch.check();
        }
        assertEquals(agent.log(), Set.of(SERVER), recovered);
        assertNotEquals(bootBefore, client.health().get(10, TimeUnit.SECONDS).getBootId());
        assertEquals(agent.log(), groupsBefore, groups(client));
        assertEquals(agent.log(), rulesBefore, nicRules(client));
        assertEquals(switchRules, switches.total());
        assertEquals(Set.of(), watch.check());
        removeChain();
    }

    /**
     * Starts the agent, deploys chain "real" on it (its pipeline and {@code nicRuleCount} NIC rules) and has the
     * watch read the agent's boot id; what the agent then holds is {@link #groupsBefore} and {@link #rulesBefore}.
     */
    private void deploy(int nicRuleCount, String... agentOptions) throws Exception {
        agent = RealAgent.startOnPort("restart", 0, agentOptions);
        String target = agent.client().target();
        port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
        // the controller's own client: it outlives the agent process, as the server registry's does
        client = GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(port)
                .deadline(Duration.ofSeconds(5)).build());
        List<org.metron.agent.v1.Nic> nics = client.getResources().get(10, TimeUnit.SECONDS).getNicsList();
        // the steered NIC when there is one (it has the rule table), else the null vdev
        String nic = nics.stream().filter(n -> n.getMaxNicRules() > 0).findFirst().orElse(nics.get(0)).getName();
        TestNetwork net = Fixtures.network(0);
        server = new MetronServer(SERVER, client, Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10")));
        TestServers servers = new TestServers().add(server);
        Duration t = Duration.ofSeconds(10);
        Synthesis synthesis = (spec, profile) -> compiled(spec.name());
        ChainStore store = new ChainStore(new LocalStoreFactory(), switches);
        manager = new ChainManager(store, servers, switches, new SingleInstanceLeadership(),
                new PlacementEngine(servers, net, switches, new Random(1), t), new RulePlanner(Fixtures.APP, net),
                new Deployer(switches, t), t, synthesis);
        recovery = new ServerRecovery(store, manager, t);
        watch = new AgentWatch(servers, recovery, t);

        assertEquals(ChainState.ACTIVE, manager.submit(Fixtures.chainJson("real")).state());
        groupsBefore = groups(client);
        assertEquals(agent.log(), 1, groupsBefore.size());
        rulesBefore = nicRules(client);
        assertEquals(agent.log(), nicRuleCount, rulesBefore.size());
        assertEquals(Set.of(SERVER), watch.check());
    }

    /** Stops the agent and starts it again on its port, holding nothing; returns once it answers there. */
    private void restartAgent(String... agentOptions) throws Exception {
        agent.close();
        agent = RealAgent.startOnPort("restart2", port, agentOptions);
        // the controller's client reconnects on its own, after a backoff
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            try {
                assertTrue(groups(client).isEmpty());
                return;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** Removes the chain: nothing of it is left on the agent or the switches. */
    private void removeChain() throws Exception {
        manager.remove(ChainId.of("real"));
        assertTrue(groups(client).isEmpty());
        assertTrue(nicRules(client).isEmpty());
        assertEquals(0, switches.total());
    }
}
