package org.metron.app.impl;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.ServerResources;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.ServerInfo;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
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
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * ChainManager against a real metron-agent over real gRPC: placement reads its real cores and NICs, the
 * pipeline runs on it, a failed switch install removes it again, a bad group config is the agent's own error.
 */
public class RealAgentDeployTest {
    private static RealAgent agent;
    private static String nic;

    @BeforeClass
    public static void startAgent() throws Exception {
        agent = RealAgent.start("deploy");
        ServerResources res = agent.client().getResources().get(10, TimeUnit.SECONDS);
        nic = res.getNics(0).getName();
    }

    @AfterClass
    public static void stopAgent() throws Exception {
        if (agent != null) {
            agent.close();
        }
    }

    private static CompiledChain compiled(String name, String click) {
        return new CompiledChain(name, org.metron.synth.TargetProfile.OPENFLOW13,
                List.of(new TrafficClass(0, List.of("udp"), 0, List.of(), false, "", "pass")),
                List.of(new ClassGroup(0, List.of(0), click, "", true)),
                List.of(OffloadRule.of(1, RuleMatch.builder().ethType(0x0800).ipProto(17).build(),
                        RuleAction.toServer(0))),
                List.of("fw.out0"), new SynthStats(1, 1, 1, 0, Map.of()));
    }

    private static final class Rig {
        final TestSwitches switches = new TestSwitches();
        final ChainManager manager;

        Rig(String click) {
            TestNetwork net = Fixtures.network(0);
            TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:real"),
                    agent.client(), Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
            Duration t = Duration.ofSeconds(10);
            manager = new ChainManager(new ChainStore(new LocalStoreFactory(), switches), servers, switches,
                    new SingleInstanceLeadership(), new PlacementEngine(servers, net, switches, new Random(1), t),
                    new RulePlanner(Fixtures.APP, net), new Deployer(switches, t), t,
                    (spec, profile) -> compiled(spec.name(), click));
        }
    }

    private static List<PipelineStatus> pipelines() throws Exception {
        return agent.client().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList();
    }

    @Test
    public void deploysOnTheRealAgentAndRemovesCleanly() throws Exception {
        Rig rig = new Rig("input -> [0]output;");
        assertEquals(ChainState.ACTIVE, rig.manager.submit(Fixtures.chainJson("real")).state());
        List<PipelineStatus> running = pipelines();
        assertEquals(agent.log(), 1, running.size());
        assertEquals("real", running.get(0).getPipelineId());
        assertEquals(rig.manager.placement(ChainId.of("real")).get().groups().get(0).tag().group(),
                running.get(0).getGroups(0).getTag().getValue());

        ServerInfo s = rig.manager.servers().get(0);
        assertTrue(s.reachable());
        assertTrue(s.cores().stream().anyMatch(c -> c.pipeline().equals("real")));

        rig.manager.remove(ChainId.of("real"));
        assertTrue(pipelines().isEmpty());
        assertEquals(0, rig.switches.total());
    }

    @Test
    public void failedSwitchInstallRemovesThePipelineFromTheRealAgent() throws Exception {
        Rig rig = new Rig("input -> [0]output;");
        rig.switches.reject(Fixtures.D1);
        MetronException e = assertThrows(MetronException.class,
                () -> rig.manager.submit(Fixtures.chainJson("rollback")));
        assertEquals(MetronException.Fault.SWITCH_FAILURE, e.fault());
        assertTrue(pipelines().isEmpty());
        assertTrue(agent.client().listNicRules("").get(10, TimeUnit.SECONDS).getRulesList().isEmpty());
    }

    @Test
    public void theAgentsOwnConfigErrorIsReported() throws Exception {
        Rig rig = new Rig("input -> NoSuchElement -> [0]output;");
        MetronException e = assertThrows(MetronException.class, () -> rig.manager.submit(Fixtures.chainJson("bad")));
        assertEquals(MetronException.Fault.AGENT_FAILURE, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("NoSuchElement"));
        assertFalse(rig.manager.placement(ChainId.of("bad")).isPresent());
        assertTrue(pipelines().isEmpty());
    }
}
