package org.metron.app.onos;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
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
}
