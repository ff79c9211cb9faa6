package org.metron.drivers.server;

import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.testing.AgentProcess;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceAgentEvent;
import org.onosproject.net.device.DeviceHandshaker;
import org.onosproject.net.provider.ProviderId;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** ONOS's device handshake with a real agent: connect, probe, mastership events, agent loss, disconnect. */
public class MetronServerHandshakerAgentTest {

    @Test
    public void handshakeFollowsTheAgent() throws Exception {
        DefaultAgentClientService agents = new DefaultAgentClientService();
        agents.activate();
        AgentProcess agent = AgentProcess.start(new AgentProcess.Options());
        try {
            AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(agent.port())
                    .deadline(AgentProcess.CALL_DEADLINE).build();
            DeviceId device = MetronDeviceIds.deviceId(ep);
            agents.setEndpoint(device, ep);
            DeviceHandshaker hs = new MetronServerHandler(device, agents).behaviour(DeviceHandshaker.class);

            assertFalse(hs.hasConnection());
            assertTrue(hs.connect());
            assertTrue(hs.hasConnection());
            assertTrue(hs.probeReachability().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS));
            assertTrue("channel is up after a call", hs.isReachable());

            List<DeviceAgentEvent> events = new CopyOnWriteArrayList<>();
            ProviderId provider = new ProviderId("metron", "test");
            hs.addDeviceAgentListener(provider, events::add);
            assertEquals(MastershipRole.NONE, hs.getRole());
            hs.roleChanged(MastershipRole.MASTER);
            assertEquals(MastershipRole.MASTER, hs.getRole());
            hs.roleChanged(MastershipRole.STANDBY);
            assertEquals(List.of(DeviceAgentEvent.Type.ROLE_MASTER, DeviceAgentEvent.Type.ROLE_STANDBY),
                         events.stream().map(DeviceAgentEvent::type).collect(java.util.stream.Collectors.toList()));
            assertTrue(events.stream().allMatch(e -> e.subject().equals(device)));
            hs.removeDeviceAgentListener(provider);
            hs.roleChanged(MastershipRole.MASTER);
            assertEquals(2, events.size());

            agent.close();
            assertFalse("a stopped agent is not reachable", hs.probeReachability().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS));
            assertFalse(hs.isReachable());

            hs.disconnect();
            assertFalse(hs.hasConnection());
        } finally {
            agent.close();
            agents.deactivate();
        }
    }
}
