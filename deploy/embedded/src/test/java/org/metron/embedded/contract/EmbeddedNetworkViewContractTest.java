package org.metron.embedded.contract;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.rules.TemporaryFolder;
import org.metron.app.spi.NetworkView;
import org.metron.embedded.net.EmbeddedNetworkView;
import org.metron.embedded.net.NetworkFile;
import org.metron.embedded.topology.OvsNetwork;


/**
 * The embedded host's implementation, {@link EmbeddedNetworkView}, on paper-fig5 emulated with real Open vSwitch
 * bridges (needs root and OVS, as the other OpenFlow tests).
 */
public class EmbeddedNetworkViewContractTest extends NetworkViewContract {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static OvsNetwork ovs;

    @BeforeClass
    public static void up() throws Exception {
        ovs = OvsNetwork.up("paper-fig5", 3, TMP.getRoot().toPath());
    }

    @AfterClass
    public static void down() throws Exception {
        OvsNetwork.down(ovs);
    }

    @Override
    protected NetworkView view() {
        return new EmbeddedNetworkView(NetworkFile.read(ovs.net.stateFile()), ovs.openflow);
    }
}
