package org.metron.embedded.contract;

import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.rules.TemporaryFolder;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.embedded.net.OpenFlowSwitchProgrammer;
import org.metron.embedded.topology.EmulatedNetwork;
import org.metron.openflow.FlowRuleTranslator;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OpenFlowController;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.net.DeviceId;
import org.projectfloodlight.openflow.types.DatapathId;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * The embedded host's implementation, {@link OpenFlowSwitchProgrammer}, against a real Open vSwitch bridge (topology
 * {@code single}; needs root and OVS, as the other OpenFlow tests).
 */
public class EmbeddedSwitchProgrammerContractTest extends SwitchProgrammerContract {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static final ApplicationId APP = new DefaultApplicationId(0x4d, "org.metron.app");
    private static OpenFlowController controller;
    private static EmulatedNetwork net;
    private static OfSwitch sw;

    @BeforeClass
    public static void up() throws Exception {
        Assume.assumeTrue("needs root and OVS", EmulatedNetwork.available());
        controller = OpenFlowController.listen(new InetSocketAddress("127.0.0.1", 0), 5000);
        net = EmulatedNetwork.up("single", controller.port(), TMP.getRoot().toPath());
        sw = controller.await(DatapathId.of(1), 15_000);
    }

    @AfterClass
    public static void down() throws Exception {
        if (net != null) {
            net.close();
        }
        if (controller != null) {
            controller.close();
        }
    }

    @Override
    protected SwitchProgrammer programmer() {
        sw.send(List.of(new FlowRuleTranslator(sw.factory()).deleteAll())).join();
        return new OpenFlowSwitchProgrammer(controller, APP);
    }

    @Override
    protected DeviceId device() {
        return DeviceId.deviceId("of:0000000000000001");
    }

    @Override
    protected ApplicationId app() {
        return APP;
    }
}
