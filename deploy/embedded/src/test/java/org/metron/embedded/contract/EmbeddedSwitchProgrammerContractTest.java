package org.metron.embedded.contract;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.rules.TemporaryFolder;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.embedded.net.OpenFlowSwitchProgrammer;
import org.metron.embedded.topology.OvsNetwork;
import org.metron.openflow.FlowRuleTranslator;
import org.metron.openflow.OfSwitch;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.core.GroupId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.projectfloodlight.openflow.types.DatapathId;

import java.util.ArrayList;
import java.util.List;

/**
 * The embedded host's implementation, {@link OpenFlowSwitchProgrammer}, against a real Open vSwitch bridge (topology
 * {@code single}; needs root and OVS, as the other OpenFlow tests).
 */
public class EmbeddedSwitchProgrammerContractTest extends SwitchProgrammerContract {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static final ApplicationId APP = new DefaultApplicationId(0x4d, "org.metron.app");
    private static OvsNetwork ovs;
    private static OfSwitch sw;

    @BeforeClass
    public static void up() throws Exception {
        ovs = OvsNetwork.up("single", 1, TMP.getRoot().toPath());
        sw = ovs.openflow.get(DatapathId.of(1)).orElseThrow();
    }

    @AfterClass
    public static void down() throws Exception {
        OvsNetwork.down(ovs);
    }

    @Override
    protected SwitchProgrammer programmer() {
        sw.send(List.of(new FlowRuleTranslator(sw.factory()).deleteAll())).join();
        return new OpenFlowSwitchProgrammer(ovs.openflow, APP);
    }

    @Override
    protected DeviceId device() {
        return DeviceId.deviceId("of:0000000000000001");
    }

    @Override
    protected ApplicationId app() {
        return APP;
    }

    /** The batch with one rule sending to a group the switch does not have (OVS: OFPBAC_BAD_OUT_GROUP). */
    @Override
    protected List<FlowRule> refusedBatch(List<FlowRule> good) {
        FlowRule last = good.get(good.size() - 1);
        List<FlowRule> out = new ArrayList<>(good);
        out.add(DefaultFlowRule.builder().forDevice(last.deviceId()).forTable(0).withPriority(last.priority() + 1)
                .fromApp(APP).makePermanent().withSelector(last.selector())
                .withTreatment(DefaultTrafficTreatment.builder().group(GroupId.valueOf(0x7ee)).build()).build());
        return out;
    }
}
