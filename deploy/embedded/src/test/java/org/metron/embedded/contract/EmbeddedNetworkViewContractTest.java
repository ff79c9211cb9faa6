package org.metron.embedded.contract;

import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.rules.TemporaryFolder;
import org.metron.app.spi.NetworkView;
import org.metron.embedded.net.EmbeddedNetworkView;
import org.metron.embedded.net.NetworkFile;
import org.metron.embedded.topology.EmulatedNetwork;
import org.metron.openflow.OpenFlowController;
import org.projectfloodlight.openflow.types.DatapathId;

import java.net.InetSocketAddress;

/**
 * The embedded host's implementation, {@link EmbeddedNetworkView}, on paper-fig5 emulated with real Open vSwitch
 * bridges (needs root and OVS, as the other OpenFlow tests).
 */
public class EmbeddedNetworkViewContractTest extends NetworkViewContract {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static OpenFlowController openflow;
    private static EmulatedNetwork net;

    @BeforeClass
    public static void up() throws Exception {
        Assume.assumeTrue("needs root and OVS", EmulatedNetwork.available());
        openflow = OpenFlowController.listen(new InetSocketAddress("127.0.0.1", 0), 5000);
        net = EmulatedNetwork.up("paper-fig5", openflow.port(), TMP.getRoot().toPath());
        for (int dpid = 1; dpid <= 3; dpid++) {
            openflow.await(DatapathId.of(dpid), 15_000);
        }
    }

    @AfterClass
    public static void down() throws Exception {
        if (net != null) {
            net.close();
        }
        if (openflow != null) {
            openflow.close();
        }
    }

    @Override
    protected NetworkView view() {
        return new EmbeddedNetworkView(NetworkFile.read(net.stateFile()), openflow);
    }
}
