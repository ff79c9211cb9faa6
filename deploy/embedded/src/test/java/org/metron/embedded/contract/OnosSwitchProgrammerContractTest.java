package org.metron.embedded.contract;

import org.metron.app.onos.OnosSwitchProgrammer;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.standin.CoreStandin;
import org.metron.standin.net.DeviceManagerStandin;
import org.metron.standin.net.DriverManagerStandin;
import org.metron.standin.net.FlowRuleStandin;
import org.metron.standin.net.GroupStandin;
import org.onosproject.core.ApplicationId;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.basics.DeviceAnnotationConfig;
import org.onosproject.net.flow.FlowRule;

import java.util.List;


import static org.metron.embedded.contract.StandinNode.set;

/**
 * ONOS's implementation, {@link OnosSwitchProgrammer}, over ONOS's FlowRuleService, CoreService and GroupService on
 * one node with a switch connected and mastered. ONOS's own (onos-core-net, -dist) are not on Maven Central:
 * tests/karaf/onos-standin's (FlowRuleStandin follows FlowRuleManager + ECFlowRuleStore), which the Karaf tests run
 * ONOS apps on; the switch's flow provider is not here, so its rules are ONOS's flow-rule store's (ADDED once the
 * batch is applied), which is what ONOS answers flow-rule queries from.
 */
public class OnosSwitchProgrammerContractTest extends SwitchProgrammerContract {
    private static final DeviceId SWITCH = DeviceId.deviceId("of:0000000000000001");
    private StandinNode node;
    private CoreStandin core;

    @Override
    protected SwitchProgrammer programmer() {
        node = new StandinNode();
        DeviceManagerStandin devices = node.devices();
        DriverManagerStandin drivers = node.drivers();
        FlowRuleStandin flows = new FlowRuleStandin();
        set(flows, "dispatcher", node.events);
        set(flows, "drivers", drivers);
        set(flows, "devices", devices);
        set(flows, "mastership", node.mastership());
        set(flows, "atomixNode", node.noCluster);
        node.start(flows);
        core = new CoreStandin();
        set(core, "atomixNode", node.noCluster);
        node.start(core);
        GroupStandin groups = new GroupStandin();
        set(groups, "dispatcher", node.events);
        set(groups, "mastership", node.mastership());
        node.start(groups);
        OnosSwitchProgrammer p = new OnosSwitchProgrammer();
        set(p, "flowRuleService", flows);
        set(p, "coreService", core);
        set(p, "groupService", groups);
        node.start(p);
        node.connect(SWITCH);
        return p;
    }

    @Override
    protected DeviceId device() {
        return SWITCH;
    }

    @Override
    protected ApplicationId app() {
        return core.getAppId(OnosSwitchProgrammer.APP_NAME);
    }

    /**
     * The switch annotated to refuse every add (the stand-in's FlowRuleStandin.REJECT_ANNOTATION through netcfg's
     * device annotations, as the Karaf test sets it): its batches fail as a switch answering each flow-mod with an
     * error makes FlowRuleManager fail them.
     */
    @Override
    protected List<FlowRule> refusedBatch(List<FlowRule> good) throws Exception {
        ObjectNode cfg = new ObjectMapper().createObjectNode();
        cfg.putObject("entries").put("standinRejectFlowRules", "true");
        node.netcfg().applyConfig(SWITCH, DeviceAnnotationConfig.class, cfg);
        long end = System.currentTimeMillis() + 5_000;
        while (!"true".equals(node.devices().getDevice(SWITCH).annotations().value("standinRejectFlowRules"))) {
            if (System.currentTimeMillis() > end) {
                throw new AssertionError(SWITCH + " not annotated");
            }
            Thread.sleep(20);
        }
        return good;
    }

    @Override
    protected void stop() {
        node.stop();
    }
}
