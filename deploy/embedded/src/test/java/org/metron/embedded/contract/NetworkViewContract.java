package org.metron.embedded.contract;

import org.junit.After;
import org.junit.Test;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.NetworkView;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * What the controller core may assume of {@link NetworkView} (spi/NetworkView), asked of ONOS's implementation over
 * its device, link and path services and of the embedded host's over its OpenFlow switches and topology file, both
 * on paper-fig5: switches s1, s2, s3 (OpenFlow), server srv1 behind s3:4; s1 reaches s3 directly (s1:2-s3:2) or
 * through s2 (s1:3-s2:1, s2:2-s3:3).
 */
public abstract class NetworkViewContract {
    protected static final DeviceId S1 = DeviceId.deviceId("of:0000000000000001");
    protected static final DeviceId S2 = DeviceId.deviceId("of:0000000000000002");
    protected static final DeviceId S3 = DeviceId.deviceId("of:0000000000000003");
    protected static final DeviceId SRV1 = DeviceId.deviceId("metron:srv1");
    private static final ConnectPoint INGRESS = ConnectPoint.deviceConnectPoint("of:0000000000000001/1");
    private static final ConnectPoint SERVER_NIC = ConnectPoint.deviceConnectPoint("metron:srv1/1");
    private final NetworkView view = view();

    /** A fresh implementation seeing paper-fig5 with every device and link up. */
    protected abstract NetworkView view();

    /** Stops what {@link #view()} started. */
    protected void stop() {
    }

    @After
    public void tearDown() {
        stop();
    }

    private static List<String> hops(Optional<List<Link>> path) {
        return path.orElseThrow().stream().map(l -> l.src() + ">" + l.dst()).collect(Collectors.toList());
    }

    @Test
    public void devicesAreTheSwitchesAndTheServerWithTheirRoles() {
        Map<DeviceId, DeviceRole> roles = view.devices().stream()
                .collect(Collectors.toMap(NetworkDevice::id, NetworkDevice::role));
        assertEquals(Map.of(S1, DeviceRole.OPENFLOW_SWITCH, S2, DeviceRole.OPENFLOW_SWITCH,
                S3, DeviceRole.OPENFLOW_SWITCH, SRV1, DeviceRole.SERVER), roles);
        assertEquals(DeviceRole.SERVER, view.device(SRV1).orElseThrow().role());
        assertTrue(view.device(S1).orElseThrow().ruleCapacity() > 0);
        assertTrue(view.device(DeviceId.deviceId("of:00000000000000ee")).isEmpty());
    }

    @Test
    public void theShortestPathIsTheDirectLinkAndAvoidingItGoesThroughS2() {
        assertEquals(List.of("of:0000000000000001/2>of:0000000000000003/2", "of:0000000000000003/4>metron:srv1/1"),
                hops(view.path(INGRESS, SERVER_NIC)));
        Link direct = view.path(INGRESS, SERVER_NIC).orElseThrow().get(0);
        assertEquals(List.of("of:0000000000000001/3>of:0000000000000002/1",
                        "of:0000000000000002/2>of:0000000000000003/3", "of:0000000000000003/4>metron:srv1/1"),
                hops(view.path(INGRESS, SERVER_NIC, Set.of(), Set.of(LinkKey.linkKey(direct)))));
        assertEquals(3, view.path(INGRESS, SERVER_NIC, Set.of(), Set.of(LinkKey.linkKey(direct))).get().size());
    }

    @Test
    public void noPathAroundTheServersOnlySwitchNorToAnUnknownDevice() {
        assertTrue(view.path(INGRESS, SERVER_NIC, Set.of(S3), Set.of()).isEmpty());
        assertTrue(view.path(INGRESS, ConnectPoint.deviceConnectPoint("metron:nosuch/1")).isEmpty());
    }

    @Test
    public void withinOneDeviceThePathIsEmpty() {
        assertEquals(List.of(), view.path(INGRESS, ConnectPoint.deviceConnectPoint("of:0000000000000001/2"))
                .orElseThrow());
    }

    @Test
    public void egressLinksAreTheLinksLeavingAPort() {
        assertEquals(List.of("of:0000000000000001/2>of:0000000000000003/2"),
                view.egressLinks(ConnectPoint.deviceConnectPoint("of:0000000000000001/2")).stream()
                        .map(l -> l.src() + ">" + l.dst()).collect(Collectors.toList()));
        assertTrue(view.egressLinks(INGRESS).isEmpty());
    }

    @Test
    public void noPathFromAnUnknownDeviceNorThroughAnAvoidedSourceOrTransit() {
        assertTrue(view.path(ConnectPoint.deviceConnectPoint("of:00000000000000ee/1"), SERVER_NIC).isEmpty());
        assertTrue("the source avoided", view.path(INGRESS, SERVER_NIC, Set.of(S1), Set.of()).isEmpty());
        Link direct = view.path(INGRESS, SERVER_NIC).orElseThrow().get(0);
        assertTrue("the direct link and the only other transit avoided",
                view.path(INGRESS, SERVER_NIC, Set.of(S2), Set.of(LinkKey.linkKey(direct))).isEmpty());
        assertEquals("the reverse direction of an avoided link is another link", List.of(
                "of:0000000000000001/2>of:0000000000000003/2", "of:0000000000000003/4>metron:srv1/1"),
                hops(view.path(INGRESS, SERVER_NIC, Set.of(),
                        Set.of(LinkKey.linkKey(direct.dst(), direct.src())))));
    }

    @Test
    public void aServerNicsEgressLinkLeadsToItsSwitchAndAnUnknownPortHasNone() {
        assertEquals(List.of("metron:srv1/1>of:0000000000000003/4"), view.egressLinks(SERVER_NIC).stream()
                .map(l -> l.src() + ">" + l.dst()).collect(Collectors.toList()));
        assertTrue(view.egressLinks(ConnectPoint.deviceConnectPoint("of:00000000000000ee/2")).isEmpty());
        assertTrue(view.egressLinks(ConnectPoint.deviceConnectPoint("of:0000000000000001/9")).isEmpty());
    }
}
