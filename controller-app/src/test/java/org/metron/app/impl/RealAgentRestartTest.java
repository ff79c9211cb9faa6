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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/**
 * A real metron-agent process is killed and started again on the same port: the controller's client
 * reconnects, the watch sees the new boot id and the pipeline comes back with the same groups, tags and cores,
 * the NIC rules with the same ids and contents; the chain is then removed cleanly.
 */
public class RealAgentRestartTest {
    private static final DeviceId SERVER = DeviceId.deviceId("metron:real");
    private RealAgent agent;
    private GrpcAgentClient client;
    private TestVeth veth;

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

    /** Deploys a chain, restarts the agent, waits for the watch to restore it, removes it. */
    private void restartCycle(int nicRuleCount, String... agentOptions) throws Exception {
        agent = RealAgent.startOnPort("restart", 0, agentOptions);
        String target = agent.client().target();
        int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
        // the controller's own client: it outlives the agent process, as the server registry's does
        client = GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(port)
                .deadline(Duration.ofSeconds(5)).build());
        List<org.metron.agent.v1.Nic> nics = client.getResources().get(10, TimeUnit.SECONDS).getNicsList();
        // the steered NIC when there is one (it has the rule table), else the null vdev
        String nic = nics.stream().filter(n -> n.getMaxNicRules() > 0).findFirst().orElse(nics.get(0)).getName();
        TestNetwork net = Fixtures.network(0);
        TestSwitches switches = new TestSwitches();
        TestServers servers = new TestServers().add(new MetronServer(SERVER, client,
                Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
        Duration t = Duration.ofSeconds(10);
        Synthesis synthesis = (spec, profile) -> compiled(spec.name());
        ChainStore store = new ChainStore(new LocalStoreFactory(), switches);
        ChainManager manager = new ChainManager(store, servers, switches, new SingleInstanceLeadership(),
                new PlacementEngine(servers, net, switches, new Random(1), t), new RulePlanner(Fixtures.APP, net),
                new Deployer(switches, t), t, synthesis);
        AgentWatch watch = new AgentWatch(servers, new ServerRecovery(store, manager, t), t);

        assertEquals(ChainState.ACTIVE, manager.submit(Fixtures.chainJson("real")).state());
        Set<String> before = groups(client);
        assertEquals(agent.log(), 1, before.size());
        Set<String> rulesBefore = nicRules(client);
        assertEquals(agent.log(), nicRuleCount, rulesBefore.size());
        long bootBefore = client.health().get(10, TimeUnit.SECONDS).getBootId();
        assertEquals(Set.of(SERVER), watch.check());
        int switchRules = switches.total();

        agent.close();
        agent = RealAgent.startOnPort("restart2", port, agentOptions);
        long deadline = System.currentTimeMillis() + 30_000;
        Set<DeviceId> recovered = Set.of();
        while (recovered.isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
            recovered = watch.check();
        }
        assertEquals(agent.log(), Set.of(SERVER), recovered);
        assertNotEquals(bootBefore, client.health().get(10, TimeUnit.SECONDS).getBootId());
        assertEquals(agent.log(), before, groups(client));
        assertEquals(agent.log(), rulesBefore, nicRules(client));
        assertEquals(switchRules, switches.total());
        assertEquals(Set.of(), watch.check());

        manager.remove(ChainId.of("real"));
        assertTrue(groups(client).isEmpty());
        assertTrue(nicRules(client).isEmpty());
        assertEquals(0, switches.total());
    }
}
