package org.metron.drivers.provider;

import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.server.DefaultAgentClientService;
import org.metron.drivers.server.MetronDeviceIds;
import org.metron.drivers.server.MetronServerHandler;
import org.metron.drivers.testing.AgentProcess;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * Who probes, against a real agent: any node probes and announces a device with no master; once another node
 * masters it, this node neither probes nor reports it (a dead agent is that node's to disconnect) and answers
 * isReachable from its own ping, not from a stale probe; when the device is left with no master while its agent
 * serves, this node announces it again so that ONOS gives it a master; a node that never announced the device
 * reaches a serving agent all the same (a killed master node's role comes to it).
 */
public class ServerDevicesMastershipAgentTest {

    /** Mastership as a test sets it. */
    private static final class Roles implements ServerDevices.Mastership {
        volatile boolean hasMaster;
        volatile boolean local;

        @Override
        public boolean hasMaster(DeviceId id) {
            return hasMaster;
        }

        @Override
        public boolean isLocalMaster(DeviceId id) {
            return hasMaster && local;
        }
    }

    @Test
    public void onlyTheMasterProbesAndADeviceWithoutOneIsAnnouncedAgain() throws Exception {
        DefaultAgentClientService agents = new DefaultAgentClientService();
        RecordingProviderServices onos = new RecordingProviderServices();
        Roles roles = new Roles();
        ServerDevices servers = new ServerDevices(onos.devices, onos.linkService, agents,
                                                  id -> new MetronServerHandler(id, agents), "metron-server", roles);
        onos.isReachable = servers::isConnected;
        AgentProcess agent = AgentProcess.start(new AgentProcess.Options());
        int port = agent.port();
        AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(port).deadline(Duration.ofSeconds(2))
                .build();
        DeviceId id = MetronDeviceIds.deviceId(ep);
        try {
            servers.declare(id, ep, Map.of());
            assertTrue("no master yet: this node probes and announces it", servers.isConnected(id));
            assertEquals(List.of("connected " + id), onos.calls);

            roles.hasMaster = true; // another node won the election
            assertFalse(servers.probesHere(id));
            agent.kill();
            long until = System.currentTimeMillis() + 5000;
            while (servers.isConnected(id) && System.currentTimeMillis() < until) {
                Thread.sleep(10);
            }
            assertFalse("a dead agent is not reachable from its channel, without a probe", servers.isConnected(id));
            servers.probeAll();
            assertEquals("the master disconnects it, not this node", List.of("connected " + id), onos.calls);

            agent = AgentProcess.start(new AgentProcess.Options().listenPort(port));
            roles.hasMaster = false; // the master gave it up (relinquished), the agent serves
            Thread.sleep(ServerDevices.REANNOUNCE_MS);
            servers.probe(id);
            assertEquals("announced again to get a master", List.of("connected " + id, "connected " + id),
                         onos.calls);
            assertTrue(servers.isConnected(id));
            assertEquals(List.of(true, true), onos.reachableWhenConnected);

            roles.hasMaster = true;
            roles.local = true; // this node is the master now: it probes, and disconnects a dead agent
            agent.kill();
            servers.probe(id);
            assertEquals(List.of("connected " + id, "connected " + id, "disconnected " + id), onos.calls);
        } finally {
            agent.close();
            agents.remove(id);
        }
    }

    /**
     * The 3-node cluster's failure: the node a killed master's role came to had not announced the device (only a
     * master probes; this one's first ping had found the agent down), answered isReachable no, gave the role up, and
     * the live server's device went unavailable, so Metron moved chains off it. Reachability is this node's own
     * ping, whatever it announced; and a dead agent is unreachable at once, whatever was announced.
     */
    @Test
    public void aNodeThatNeverAnnouncedTheDeviceReachesItsServingAgent() throws Exception {
        DefaultAgentClientService agents = new DefaultAgentClientService();
        RecordingProviderServices onos = new RecordingProviderServices();
        Roles roles = new Roles();
        roles.hasMaster = true; // another node masters it
        ServerDevices servers = new ServerDevices(onos.devices, onos.linkService, agents,
                                                  id -> new MetronServerHandler(id, agents), "metron-server", roles);
        int port = AgentProcess.freePort();
        AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(port).deadline(Duration.ofSeconds(2))
                .build();
        DeviceId id = MetronDeviceIds.deviceId(ep);
        AgentProcess agent = null;
        try {
            servers.declare(id, ep, Map.of()); // its agent is not up yet: nothing announced here
            assertEquals(List.of(), onos.calls);
            assertFalse(servers.isConnected(id));

            agent = AgentProcess.start(new AgentProcess.Options().listenPort(port));
            Thread.sleep(ServerDevices.REANNOUNCE_MS); // this node's last answer (down) is stale now
            assertTrue("reachable from this node though it never announced the device", servers.isConnected(id));
            assertEquals("asking announces nothing", List.of(), onos.calls);

            agent.kill();
            Thread.sleep(ServerDevices.REANNOUNCE_MS);
            assertFalse("a dead agent is unreachable, asked at once", servers.isConnected(id));
        } finally {
            if (agent != null) {
                agent.close();
            }
            agents.remove(id);
        }
    }
}
