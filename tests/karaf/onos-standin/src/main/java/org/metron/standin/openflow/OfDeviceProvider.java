package org.metron.standin.openflow;

import org.metron.openflow.OfSwitch;
import org.metron.openflow.OfSwitchListener;
import org.metron.openflow.OpenFlowController;
import org.onlab.packet.ChassisId;
import org.onosproject.net.AnnotationKeys;
import org.onosproject.net.DefaultAnnotations;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DefaultPortDescription;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.provider.ProviderId;
import org.projectfloodlight.openflow.protocol.OFControllerRole;
import org.projectfloodlight.openflow.protocol.OFPortConfig;
import org.projectfloodlight.openflow.protocol.OFPortDesc;
import org.projectfloodlight.openflow.protocol.OFPortReason;
import org.projectfloodlight.openflow.protocol.OFPortState;
import org.projectfloodlight.openflow.protocol.OFPortStatus;
import org.projectfloodlight.openflow.types.DatapathId;
import org.projectfloodlight.openflow.types.OFPort;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * Switches that connect become devices, as ONOS 2.7.0's OpenFlowDeviceProvider (providers/openflow/device) makes
 * them: {@code of:<16 hex digits of the datapath id>}, type SWITCH, its ports from the handshake's PORT_DESC
 * (number with the port's name, enabled unless the port is administratively down or has no link, annotations
 * portName and portMac), PORT_STATUS messages as port updates and deletions, a closed channel as
 * {@code deviceDisconnected}. Reported only once the handshake is done, so the device is reachable when the device
 * subsystem asks right after {@code deviceConnected}. {@code roleChanged} sends the switch an OpenFlow role request
 * (MASTER for MASTER, SLAVE otherwise, ONOS's RoleManager's MASTER/SLAVE scheme) and reports its reply through
 * {@code receivedRoleReply}; with several controllers connected, the switch itself then refuses flow mods from
 * all but the master's connection. Provider events run on one thread, in the order the switches sent them:
 * {@code deviceConnected} waits for mastership and must not block a switch's channel.
 */
final class OfDeviceProvider implements DeviceProvider, OfSwitchListener {
    /** ONOS's OpenFlow device provider's id: devices it reports have their rules sent by the rule provider. */
    static final ProviderId PID = new ProviderId("of", "org.onosproject.provider.openflow");
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final OpenFlowController controller;
    private final ExecutorService events;
    /** Generation ids of role requests: a later request must carry a larger one (OpenFlow 1.3, 6.3.7). */
    private final AtomicLong generation = new AtomicLong(System.currentTimeMillis());
    private volatile DeviceProviderService service;

    OfDeviceProvider(OpenFlowController controller, ExecutorService events) {
        this.controller = controller;
        this.events = events;
    }

    void start(DeviceProviderService providerService) {
        this.service = providerService;
        controller.switches().forEach(this::switchConnected);
    }

    static DeviceId deviceId(OfSwitch sw) {
        return DeviceId.deviceId(sw.deviceId());
    }

    private void run(String what, Runnable r) {
        events.execute(() -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.warn("OpenFlow device provider: {}: {}", what, e.toString(), e);
            }
        });
    }

    @Override
    public void switchConnected(OfSwitch sw) {
        run("connect " + sw, () -> {
            DeviceId id = deviceId(sw);
            long dpid = sw.dpid().getLong();
            service.deviceConnected(id, new DefaultDeviceDescription(id.uri(), Device.Type.SWITCH, "OpenFlow 1.3",
                    "unknown", "unknown", sw.dpid().toString(), new ChassisId(dpid),
                    DefaultAnnotations.builder().set(AnnotationKeys.PROTOCOL, "OF_13")
                            .set("channelId", String.valueOf(sw.remoteAddress())).build()));
            List<PortDescription> ports = sw.ports().values().stream().map(OfDeviceProvider::port)
                    .collect(Collectors.toList());
            service.updatePorts(id, ports);
            log.info("switch {} connected from {} with {} ports", id, sw.remoteAddress(), ports.size());
        });
    }

    @Override
    public void switchDisconnected(OfSwitch sw) {
        run("disconnect " + sw, () -> {
            log.info("switch {} disconnected", sw);
            service.deviceDisconnected(deviceId(sw));
        });
    }

    @Override
    public void portStatus(OfSwitch sw, OFPortStatus status) {
        run("port status of " + sw, () -> {
            if (status.getReason() == OFPortReason.DELETE) {
                service.deletePort(deviceId(sw), port(status.getDesc()));
            } else {
                service.portStatusChanged(deviceId(sw), port(status.getDesc()));
            }
        });
    }

    /** OpenFlowDeviceProvider's port description: number with name, enabled iff not down, no link lost. */
    static PortDescription port(OFPortDesc p) {
        OFPort no = p.getPortNo();
        PortNumber number = no.equals(OFPort.LOCAL) ? PortNumber.LOCAL
                : PortNumber.portNumber(no.getPortNumber() & 0xffffffffL, p.getName());
        boolean enabled = !p.getState().contains(OFPortState.LINK_DOWN)
                && !p.getConfig().contains(OFPortConfig.PORT_DOWN);
        return DefaultPortDescription.builder().withPortNumber(number).isEnabled(enabled).type(Port.Type.COPPER)
                .portSpeed(p.getCurrSpeed() / 1000).annotations(DefaultAnnotations.builder()
                        .set(AnnotationKeys.PORT_NAME, p.getName())
                        .set(AnnotationKeys.PORT_MAC, p.getHwAddr().toString()).build()).build();
    }

    @Override
    public ProviderId id() {
        return PID;
    }

    @Override
    public void triggerProbe(DeviceId deviceId) {
        // the switch reports its own changes (PORT_STATUS); nothing to poll
    }

    @Override
    public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
        OfSwitch sw = switchOf(deviceId);
        if (sw == null) {
            return;
        }
        OFControllerRole asked = newRole == MastershipRole.MASTER ? OFControllerRole.ROLE_MASTER
                : OFControllerRole.ROLE_SLAVE;
        sw.requestRole(asked, generation.incrementAndGet()).whenComplete((got, error) -> run("role of " + sw, () -> {
            if (error != null) {
                log.warn("switch {} refused role {}: {}", deviceId, asked, error.getMessage());
                service.receivedRoleReply(deviceId, newRole, MastershipRole.NONE);
                return;
            }
            MastershipRole answered = got == OFControllerRole.ROLE_MASTER ? MastershipRole.MASTER
                    : got == OFControllerRole.ROLE_SLAVE && newRole != MastershipRole.MASTER ? newRole
                    : MastershipRole.NONE;
            service.receivedRoleReply(deviceId, newRole, answered);
        }));
    }

    /** The switches connected now. */
    List<OfSwitch> connected() {
        return controller.switches().stream().filter(OfSwitch::isConnected).collect(Collectors.toList());
    }

    OfSwitch switchOf(DeviceId deviceId) {
        String hex = deviceId.uri().getSchemeSpecificPart();
        if (!"of".equals(deviceId.uri().getScheme()) || hex.length() != 16) {
            return null;
        }
        return controller.get(DatapathId.of(Long.parseUnsignedLong(hex, 16))).orElse(null);
    }

    @Override
    public boolean isReachable(DeviceId deviceId) {
        OfSwitch sw = switchOf(deviceId);
        return sw != null && sw.isConnected();
    }

    @Override
    public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
        // Metron never administers switch ports
    }
}
