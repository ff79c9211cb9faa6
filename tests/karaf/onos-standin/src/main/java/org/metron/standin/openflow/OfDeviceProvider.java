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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.stream.Collectors;

/**
 * Switches that connect become devices, as ONOS 2.7.0's OpenFlowDeviceProvider (providers/openflow/device) makes
 * them: {@code of:<16 hex digits of the datapath id>}, type SWITCH, its ports from the handshake's PORT_DESC
 * (number with the port's name, enabled unless the port is administratively down or has no link, annotations
 * portName and portMac), PORT_STATUS messages as port updates and deletions, a closed channel as
 * {@code deviceDisconnected}. Reported only once the handshake is done, so the device is reachable when the device
 * subsystem asks right after {@code deviceConnected}. {@code roleChanged} sends the switch an OpenFlow 1.3
 * ROLE_REQUEST as OpenFlowDeviceProvider.roleChanged maps roles (MASTER to MASTER, STANDBY to EQUAL, NONE to
 * SLAVE) and RoleManager.sendOF13RoleRequest sends it (generation id 0: ONOS 2.7 sends U64.ZERO, "FIXME ... when
 * we actually use generation ids"; Open vSwitch checks a generation id only against larger ones seen, so 0 is
 * never stale), and reports the switch's reply through {@code receivedRoleReply}. The role the switch
 * acknowledged on this node's connection is kept per connection ({@link #mastered}), as ONOS's
 * AbstractOpenFlowSwitch keeps its {@code role}: only a MASTER connection sends flow mods (AbstractOpenFlowSwitch
 * .sendMsg drops them otherwise; a connection on its way to MASTER holds them until the reply, as its
 * messagesPendingMastership queue does). With several controllers connected (a cluster), the switch demotes the
 * other MASTER connection to SLAVE when one asks for MASTER (OpenFlow 1.3, 6.3.7), and refuses a SLAVE's flow
 * mods itself (OFPBRC_IS_SLAVE). Provider events run on one thread, in the order the switches sent them:
 * {@code deviceConnected} waits for mastership and must not block a switch's channel.
 */
final class OfDeviceProvider implements DeviceProvider, OfSwitchListener {
    /** ONOS's OpenFlow device provider's id: devices it reports have their rules sent by the rule provider. */
    static final ProviderId PID = new ProviderId("of", "org.onosproject.provider.openflow");
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final OpenFlowController controller;
    private final ExecutorService events;
    /** RoleManager.sendOF13RoleRequest's generation id (ONOS 2.7 does not use generation ids). */
    private static final long GENERATION_ID = 0;
    /**
     * The role each connection holds or is being given (AbstractOpenFlowSwitch.role with its
     * messagesPendingMastership): the switch's answer once its reply is in.
     */
    private final Map<OfSwitch, CompletableFuture<OFControllerRole>> roles = new ConcurrentHashMap<>();
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
            roles.remove(sw);
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
                : newRole == MastershipRole.STANDBY ? OFControllerRole.ROLE_EQUAL : OFControllerRole.ROLE_SLAVE;
        CompletableFuture<OFControllerRole> reply = sw.requestRole(asked, GENERATION_ID);
        roles.put(sw, reply);
        log.info("role {} asked of {} on its connection from {} ({})", asked, deviceId, sw.remoteAddress(), newRole);
        reply.whenComplete((got, error) -> run("role of " + sw, () -> {
            if (error != null) {
                log.warn("switch {} refused role {}: {}", deviceId, asked, error.getMessage());
                service.receivedRoleReply(deviceId, newRole, MastershipRole.NONE);
                return;
            }
            service.receivedRoleReply(deviceId, newRole, got == asked ? newRole : MastershipRole.NONE);
        }));
    }

    /**
     * Completes true once this node's connection to the switch holds MASTER (at once if it does; when its role
     * request is answered if one is in flight), false when it holds or gets another role or is gone: what
     * AbstractOpenFlowSwitch.sendMsg decides before it writes a flow mod.
     */
    CompletableFuture<Boolean> mastered(OfSwitch sw) {
        CompletableFuture<OFControllerRole> r = roles.get(sw);
        if (r == null) {
            return CompletableFuture.completedFuture(false);
        }
        return r.handle((got, error) -> error == null && got == OFControllerRole.ROLE_MASTER && sw.isConnected());
    }

    /** The role this node's connection holds (or was last asked), for logs. */
    String roleOf(OfSwitch sw) {
        CompletableFuture<OFControllerRole> r = roles.get(sw);
        return r == null ? "none" : !r.isDone() ? "pending" : r.isCompletedExceptionally() ? "refused"
                : r.join().toString();
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
