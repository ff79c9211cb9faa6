package org.metron.standin.openflow;

import org.onosproject.core.ApplicationId;
import org.onosproject.net.Device;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.packet.PacketPriority;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What ONOS 2.7.0's PacketManager does for {@code PacketService.requestPackets(selector, priority, appId)} on its
 * default pipeline (a single-table OpenFlow switch: DefaultSingleTablePipeline turns the VERSATILE forwarding
 * objective into one flow rule): on every available SWITCH device, now and whenever one is added or comes back, a
 * permanent flow rule of the core app ({@code org.onosproject.core}, whatever app asked), the request's selector and
 * priority, treatment punt (OUTPUT:CONTROLLER) and wipeDeferred, in table 0. So the intercept shows in
 * {@code /onos/v1/flows} under the core app and on the switch with ONOS's cookie for it. {@code cancel} takes the
 * rules back, as PacketManager.cancelPackets.
 */
final class PacketIntercepts {
    private final DeviceService devices;
    private final FlowRuleService flows;
    private final ApplicationId coreApp;
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final DeviceListener listener = this::deviceChanged;

    private static final class Request {
        final TrafficSelector selector;
        final PacketPriority priority;

        Request(TrafficSelector selector, PacketPriority priority) {
            this.selector = selector;
            this.priority = priority;
        }
    }

    PacketIntercepts(DeviceService devices, FlowRuleService flows, ApplicationId coreApp) {
        this.devices = devices;
        this.flows = flows;
        this.coreApp = coreApp;
        devices.addListener(listener);
    }

    void request(TrafficSelector selector, PacketPriority priority) {
        Request r = new Request(selector, priority);
        requests.add(r);
        devices.getAvailableDevices(Device.Type.SWITCH).forEach(d -> flows.applyFlowRules(rule(d, r)));
    }

    /** Every request withdrawn from every switch (PacketManager.cancelPackets), and no more devices followed. */
    void cancelAll() {
        devices.removeListener(listener);
        for (Request r : requests) {
            devices.getAvailableDevices(Device.Type.SWITCH).forEach(d -> flows.removeFlowRules(rule(d, r)));
        }
        requests.clear();
    }

    private FlowRule rule(Device d, Request r) {
        return DefaultFlowRule.builder().forDevice(d.id()).fromApp(coreApp).withSelector(r.selector)
                .withTreatment(DefaultTrafficTreatment.builder().punt().wipeDeferred().build())
                .withPriority(r.priority.priorityValue()).makePermanent().forTable(0).build();
    }

    /** PacketManager's InternalDeviceListener: a device added or available again gets every request's rule. */
    private void deviceChanged(DeviceEvent e) {
        Device d = e.subject();
        boolean arrived = e.type() == DeviceEvent.Type.DEVICE_ADDED
                || e.type() == DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED;
        if (arrived && d.type() == Device.Type.SWITCH && devices.isAvailable(d.id())) {
            requests.forEach(r -> flows.applyFlowRules(rule(d, r)));
        }
    }
}
