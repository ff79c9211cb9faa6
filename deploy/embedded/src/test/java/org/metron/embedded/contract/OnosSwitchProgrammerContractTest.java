package org.metron.embedded.contract;

import org.metron.app.onos.OnosSwitchProgrammer;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.standin.CoreStandin;
import org.metron.standin.MastershipStandin;
import org.metron.standin.net.DeviceManagerStandin;
import org.metron.standin.net.DriverManagerStandin;
import org.metron.standin.net.FlowRuleStandin;
import org.metron.standin.net.GroupStandin;
import org.metron.standin.net.NetworkConfigStandin;
import org.onlab.packet.ChassisId;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.provider.ProviderId;


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
        MastershipStandin mastership = new MastershipStandin();
        set(mastership, "dispatcher", node.events);
        set(mastership, "atomixNode", node.noCluster);
        node.start(mastership);
        NetworkConfigStandin netcfg = new NetworkConfigStandin();
        set(netcfg, "dispatcher", node.events);
        set(netcfg, "atomixNode", node.noCluster);
        node.start(netcfg);
        DeviceManagerStandin devices = new DeviceManagerStandin();
        set(devices, "dispatcher", node.events);
        set(devices, "netcfg", netcfg);
        set(devices, "mastership", mastership);
        set(devices, "cluster", node.cluster);
        set(devices, "atomixNode", node.noCluster);
        node.start(devices);
        DriverManagerStandin drivers = new DriverManagerStandin();
        set(drivers, "dispatcher", node.events);
        set(drivers, "deviceService", devices);
        set(drivers, "netcfg", netcfg);
        node.start(drivers);
        FlowRuleStandin flows = new FlowRuleStandin();
        set(flows, "dispatcher", node.events);
        set(flows, "drivers", drivers);
        set(flows, "devices", devices);
        set(flows, "mastership", mastership);
        set(flows, "atomixNode", node.noCluster);
        node.start(flows);
        core = new CoreStandin();
        set(core, "atomixNode", node.noCluster);
        node.start(core);
        GroupStandin groups = new GroupStandin();
        set(groups, "dispatcher", node.events);
        set(groups, "mastership", mastership);
        node.start(groups);
        OnosSwitchProgrammer p = new OnosSwitchProgrammer();
        set(p, "flowRuleService", flows);
        set(p, "coreService", core);
        set(p, "groupService", groups);
        node.start(p);
        devices.register(new Switch()).deviceConnected(SWITCH, new DefaultDeviceDescription(SWITCH.uri(),
                Device.Type.SWITCH, "Nicira, Inc.", "Open vSwitch", "3.1.0", "none", new ChassisId(1)));
        if (mastership.getMasterFor(SWITCH) == null) {
            throw new AssertionError(SWITCH + " has no master");
        }
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

    @Override
    protected void stop() {
        node.stop();
    }

    /** A switch's device provider (as ONOS's OpenFlow one), always reachable. */
    private static final class Switch implements DeviceProvider {
        @Override
        public ProviderId id() {
            return new ProviderId("of", "org.metron.test");
        }

        @Override
        public void triggerProbe(DeviceId deviceId) {
        }

        @Override
        public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
        }

        @Override
        public boolean isReachable(DeviceId deviceId) {
            return true;
        }

        @Override
        public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
        }
    }
}
