package org.metron.app.onos;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.impl.AgentWatch;
import org.metron.app.spi.DeviceRole;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.onlab.packet.ChassisId;
import org.onosproject.net.DefaultDevice;
import org.onosproject.net.Device;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.provider.ProviderId;

import java.util.List;
import org.onosproject.net.DeviceId;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The ONOS component wires the core with the real synthesizer and reroutes chains on device events. */
public class MetronComponentTest {
    private static final String S3 = "of:0000000000000003";

    @Test
    public void activateSubmitRerouteOnDeviceDownDeactivate() throws Exception {
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OTHER, 0)
                .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 1000).device(S3, DeviceRole.OPENFLOW_SWITCH, 1000)
                .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S1, 3, S3, 1);
        TestSwitches switches = new TestSwitches();
        OnosServices onos = new OnosServices(net, switches,
                new TestServers().add(Fixtures.server(0, new TestAgent("a:1", 2, 0).nic("eth0", true, 8))));
        List<DeviceListener> deviceListeners = onos.deviceListeners;
        List<LinkListener> linkListeners = onos.linkListeners;
        MetronComponent c = onos.activateMetron();
        assertEquals(1, deviceListeners.size());
        assertEquals(1, linkListeners.size());

        // a stateless firewall between s1:1 and s2:5, fully offloaded by the real synthesizer (IPv4 only: OVS reads
        // a later IPv6 fragment's protocol as 44, so an IPv6 protocol test needs software for those)
        String fw = "{\"name\": \"fw\", \"nfs\": [{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> Strip(14) -> "
                + "CheckIPHeader -> IPFilter(allow ip vers 4 and udp, deny all) -> Unstrip(14) -> ToDevice(out0);\"}], "
                + "\"ingress\": [\"fw.in0\"], \"egress\": [\"fw.out0\"], \"deployment\": {\"ingressPoint\": \""
                + Fixtures.S1 + "/1\", \"egressPoint\": \"" + Fixtures.S2 + "/5\"}}";
        assertEquals(ChainState.ACTIVE, c.submit(fw).state());
        assertTrue(c.placement(ChainId.of("fw")).get().server().isEmpty());
        int before = switches.rules(Fixtures.D2).size();
        assertTrue(before > 0);

        // s2 goes away: nowhere else reaches the egress, so the chain stays as it was and nothing breaks
        net.down(Fixtures.S2);
        Device s2 = new DefaultDevice(new ProviderId("of", "test"), Fixtures.D2, Device.Type.SWITCH, "m", "h", "s",
                "1", new ChassisId());
        DeviceListener l = deviceListeners.get(0);
        DeviceEvent down = new DeviceEvent(DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED, s2);
        assertTrue(l.isRelevant(down));
        l.event(down);
        c.deactivate(); // waits for the reroute
        assertEquals(before, switches.rules(Fixtures.D2).size());
        assertEquals(ChainState.ACTIVE, onos.chainStores.chainStore().chains().get(ChainId.of("fw")).get().value()
                .state());
        assertTrue(deviceListeners.isEmpty());
        assertTrue(linkListeners.isEmpty());
    }

    @Test
    public void aDeviceDownWithAnotherPathMovesTheRulesThere() throws Exception {
        // ingress on a non-programmable s1, two programmable switches s2 and s3 both reaching the egress on s4
        String s4 = "of:0000000000000004";
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OTHER, 0)
                .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 1000).device(S3, DeviceRole.OPENFLOW_SWITCH, 1000)
                .device(s4, DeviceRole.OTHER, 0)
                .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S1, 3, S3, 1)
                .cable(Fixtures.S2, 2, s4, 1).cable(S3, 2, s4, 2);
        TestSwitches switches = new TestSwitches();
        OnosServices onos = new OnosServices(net, switches, new TestServers());
        MetronComponent c = onos.activateMetron();
        String fw = "{\"name\": \"fw\", \"nfs\": [{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> Strip(14) -> "
                + "CheckIPHeader -> IPFilter(allow ip vers 4 and udp, deny all) -> Unstrip(14) -> ToDevice(out0);\"}], "
                + "\"ingress\": [\"fw.in0\"], \"egress\": [\"fw.out0\"], \"deployment\": {\"ingressPoint\": \""
                + Fixtures.S1 + "/1\", \"egressPoint\": \"" + s4 + "/5\"}}";
        assertEquals(ChainState.ACTIVE, c.submit(fw).state());
        DeviceId first = c.placement(ChainId.of("fw")).get().offloadDevice().get();
        DeviceId other = first.equals(Fixtures.D2) ? DeviceId.deviceId(S3) : Fixtures.D2;
        assertTrue(switches.rules(first).size() > 0);
        assertEquals(0, switches.rules(other).size());

        net.down(first.toString());
        deviceDown(onos, first);
        OnosServices.deactivate(c); // waits for the reroute
        assertEquals("the offload moved to the other switch", other,
                     onos.chainStores.chainStore().placements().get(ChainId.of("fw")).get().value()
                             .offloadDevice().get());
        assertTrue(switches.rules(other).size() > 0);
    }

    @Test
    public void aServerUnavailablePastTheDeadlineHasItsChainsMovedToAnother() throws Exception {
        TestNetwork net = Fixtures.network(2);
        TestServers servers = new TestServers();
        List<TestAgent> agents = List.of(new TestAgent("a:1", 4, 0.1).nic("eth0", true, 128).nic("eth1", true, 128),
                                         new TestAgent("a:2", 4, 0.2).nic("eth0", true, 128).nic("eth1", true, 128));
        servers.add(Fixtures.server(0, agents.get(0))).add(Fixtures.server(1, agents.get(1)));
        OnosServices onos = new OnosServices(net, new TestSwitches(), servers);
        System.setProperty(AgentWatch.FAILOVER_PROPERTY, "50");
        MetronComponent c;
        try {
            c = onos.activateMetron();
        } finally {
            System.clearProperty(AgentWatch.FAILOVER_PROPERTY);
        }
        ChainId id = ChainId.of("web");
        // a NAPT after the firewall: stateful, so the real synthesizer puts it on a server
        String napt = Fixtures.chainJson("web").replace("-> Unstrip(14) -> ToDevice(out0);", "-> IPRewriter(pattern "
                + "192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);");
        assertEquals(ChainState.ACTIVE, c.submit(napt).state());
        DeviceId lost = c.placement(id).get().server().get();

        net.down(lost.toString());
        servers.remove(lost);
        deviceDown(onos, lost);
        long until = System.currentTimeMillis() + 10_000;
        // the move is done when the chain is ACTIVE again elsewhere (placement is stored before deployment)
        while ((c.placement(id).flatMap(p -> p.server()).map(lost::equals).orElse(true)
                || c.chain(id).get().state() != ChainState.ACTIVE) && System.currentTimeMillis() < until) {
            Thread.sleep(20);
        }
        DeviceId now = c.placement(id).get().server().get();
        assertTrue("moved off " + lost + ", now on " + now, !now.equals(lost));
        assertEquals(ChainState.ACTIVE, c.chain(id).get().state());
        assertTrue(agents.get(lost.toString().equals(Fixtures.serverId(0)) ? 1 : 0).pipelines().containsKey("web"));
        OnosServices.deactivate(c);
    }

    private static void deviceDown(OnosServices onos, DeviceId id) {
        Device d = new DefaultDevice(new ProviderId("test", "test"), id, Device.Type.SWITCH, "m", "h", "s", "1",
                                     new ChassisId());
        DeviceEvent down = new DeviceEvent(DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED, d);
        assertTrue(onos.deviceListeners.get(0).isRelevant(down));
        onos.deviceListeners.get(0).event(down);
    }
}
