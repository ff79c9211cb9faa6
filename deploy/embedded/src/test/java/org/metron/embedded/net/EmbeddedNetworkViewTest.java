package org.metron.embedded.net;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.app.spi.DeviceRole;
import org.metron.embedded.topology.OvsNetwork;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The network view on paper-fig5 (two paths s1→s3): live paths follow real OVS port status. */
public class EmbeddedNetworkViewTest {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static OvsNetwork ovs;
    private static EmbeddedNetworkView view;

    @BeforeClass
    public static void up() throws Exception {
        ovs = OvsNetwork.up("paper-fig5", 3, TMP.getRoot().toPath());
        view = new EmbeddedNetworkView(NetworkFile.read(ovs.net.stateFile()), ovs.openflow);
    }

    @AfterClass
    public static void down() throws Exception {
        OvsNetwork.down(ovs);
    }

    private static List<String> path() {
        return view.path(ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
                         ConnectPoint.deviceConnectPoint("metron:srv1/1")).orElseThrow().stream()
                .map(l -> l.src() + ">" + l.dst()).collect(Collectors.toList());
    }

    @Test
    public void devicesAreTheConnectedSwitchesAndTheServers() {
        assertEquals(4, view.devices().size());
        assertEquals(DeviceRole.OPENFLOW_SWITCH, view.device(DeviceId.deviceId("of:0000000000000003")).orElseThrow()
                .role());
        assertEquals(DeviceRole.SERVER, view.device(DeviceId.deviceId("metron:srv1")).orElseThrow().role());
    }

    @Test
    public void aLinkThatGoesDownMovesThePathToTheBackupAndBack() throws Exception {
        assertEquals(List.of("of:0000000000000001/2>of:0000000000000003/2", "of:0000000000000003/4>metron:srv1/1"),
                     path());
        ovs.net.setPortUp("s1", 2, false);
        try {
            long end = System.currentTimeMillis() + 10_000;
            while (path().size() == 2 && System.currentTimeMillis() < end) {
                Thread.sleep(20);
            }
            assertEquals(List.of("of:0000000000000001/3>of:0000000000000002/1",
                                 "of:0000000000000002/2>of:0000000000000003/3",
                                 "of:0000000000000003/4>metron:srv1/1"), path());
        } finally {
            ovs.net.setPortUp("s1", 2, true);
        }
        long end = System.currentTimeMillis() + 10_000;
        while (path().size() != 2 && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        assertEquals(2, path().size());
    }

    @Test
    public void theTopologysHostsAreItsHostDatabase() {
        // paper-fig5: src on s1:1, sink on s3:1 (what the last hop toward a chain's ends addresses frames to)
        assertEquals(Set.of(MacAddress.valueOf("02:00:00:00:00:01")),
                     view.hostMacs(ConnectPoint.deviceConnectPoint("of:0000000000000001/1")));
        assertEquals(Set.of(MacAddress.valueOf("02:00:00:00:00:02")),
                     view.hostMacs(ConnectPoint.deviceConnectPoint("of:0000000000000003/1")));
        assertEquals(Set.of(), view.hostMacs(ConnectPoint.deviceConnectPoint("of:0000000000000001/2")));
    }

    @Test
    public void noPathWhenTheServersSwitchIsUnreachable() {
        assertTrue(view.path(ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
                             ConnectPoint.deviceConnectPoint("metron:nosuch/1")).isEmpty());
    }
}
