package org.metron.standin.net;

import org.onlab.packet.ChassisId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.PortNumber;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.config.basics.BasicDeviceConfig;
import org.onosproject.net.config.basics.BasicLinkConfig;
import org.onosproject.net.config.basics.PortDescriptionsConfig;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderRegistry;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.link.DefaultLinkDescription;
import org.onosproject.net.link.LinkProvider;
import org.onosproject.net.link.LinkProviderRegistry;
import org.onosproject.net.link.LinkProviderService;
import org.onosproject.net.provider.ProviderId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Stands in for ONOS's OpenFlow device provider and its link discovery (LLDP), whose bundles Maven Central does
 * not serve: an {@code of:} device that netcfg declares (basic {@code "type": "SWITCH"}, its ports as
 * {@code "ports"}, ONOS's PortDescriptionsConfig) is reported as if the switch had connected, and every link
 * netcfg declares (links/basic, both directions when {@code bidirectional}) as if LLDP had found it, once both of
 * its ends are devices. No switch is behind these devices: the flow-rule stand-in records their rules. Metron
 * sees them exactly as it sees ONOS's OpenFlow switches (an {@code of:} SWITCH with ports and links), so a chain
 * can be placed, its rules planned and its pipeline deployed on a real agent inside the real Karaf. Switches that
 * really connect are the OpenFlow stand-in's (org.metron.standin.openflow); a netcfg entry of one is not reported
 * here unless it says {@code "type": "SWITCH"}, so declare a real switch without it.
 */
@Component(immediate = true)
public class NetcfgSwitchProvider implements DeviceProvider, LinkProvider {
    /**
     * Not the "of" scheme: ONOS allows one primary provider per scheme, and "of" is the OpenFlow stand-in's
     * (org.metron.standin.openflow, real switches), as ONOS's OpenFlowDeviceProvider has it. A device keeps the
     * provider that reported it, so netcfg switches are asked about roles and reachability here and their rules
     * stay recorded.
     */
    static final ProviderId PID = new ProviderId("netcfg", "org.metron.standin.netcfgswitch");
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final Set<DeviceId> reported = ConcurrentHashMap.newKeySet();
    private final NetworkConfigListener netcfgListener = e -> run(() -> netcfgChanged(e));
    private final DeviceListener deviceListener = e -> {
        if (e.type() == DeviceEvent.Type.DEVICE_ADDED || e.type() == DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED) {
            run(this::reportLinks); // a link's far end (a Metron server) may have just appeared
        }
    };
    private ExecutorService executor;
    private DeviceProviderService devices;
    private LinkProviderService links;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigService netcfg;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceProviderRegistry deviceRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkProviderRegistry linkRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Activate
    protected void activate() {
        executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-netcfg-switches"));
        devices = deviceRegistry.register(this);
        links = linkRegistry.register(this);
        netcfg.addListener(netcfgListener);
        deviceService.addListener(deviceListener);
        run(() -> {
            netcfg.getSubjects(DeviceId.class, BasicDeviceConfig.class).forEach(this::reportDevice);
            reportLinks();
        });
    }

    @Deactivate
    protected void deactivate() {
        deviceService.removeListener(deviceListener);
        netcfg.removeListener(netcfgListener);
        executor.shutdownNow();
        reported.forEach(id -> devices.deviceDisconnected(id));
        linkRegistry.unregister(this);
        deviceRegistry.unregister(this);
    }

    private void run(Runnable r) {
        executor.execute(() -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.warn("netcfg switch stand-in: {}", e.getMessage(), e);
            }
        });
    }

    private void netcfgChanged(NetworkConfigEvent e) {
        if (e.subject() instanceof DeviceId && (e.configClass() == BasicDeviceConfig.class
                || e.configClass() == PortDescriptionsConfig.class)) {
            reportDevice((DeviceId) e.subject());
        } else if (e.subject() instanceof LinkKey && e.configClass() == BasicLinkConfig.class) {
            reportLinks();
        }
    }

    private void reportDevice(DeviceId id) {
        BasicDeviceConfig basic = netcfg.getConfig(id, BasicDeviceConfig.class);
        if (!"of".equals(id.uri().getScheme()) || basic == null || basic.type() != Device.Type.SWITCH) {
            return;
        }
        // a switch's OpenFlow channel is up before ONOS hears of it: reachable before deviceConnected, which
        // asks isReachable right after granting mastership (ONOS's OpenFlowDeviceProvider is so)
        reported.add(id);
        devices.deviceConnected(id, new DefaultDeviceDescription(id.uri(), Device.Type.SWITCH, "Metron stand-in",
                "netcfg", "netcfg", id.toString(), new ChassisId(id.uri().getSchemeSpecificPart().hashCode())));
        PortDescriptionsConfig ports = netcfg.getConfig(id, PortDescriptionsConfig.class);
        if (ports != null) {
            devices.updatePorts(id, ports.portDescriptions());
        }
        log.info("switch {} declared in netcfg: reported with {} ports", id,
                 ports == null ? 0 : ports.portDescriptions().size());
        reportLinks();
    }

    private void reportLinks() {
        for (LinkKey k : netcfg.getSubjects(LinkKey.class, BasicLinkConfig.class)) {
            BasicLinkConfig cfg = netcfg.getConfig(k, BasicLinkConfig.class);
            if (cfg == null || !cfg.isAllowed()) {
                continue;
            }
            Link.Type type = cfg.type() != null ? cfg.type() : Link.Type.DIRECT;
            detect(k.src(), k.dst(), type);
            if (cfg.isBidirectional()) {
                detect(k.dst(), k.src(), type);
            }
        }
    }

    private void detect(ConnectPoint src, ConnectPoint dst, Link.Type type) {
        // LLDP finds no link through a port that is down
        if (deviceService.isAvailable(src.deviceId()) && deviceService.isAvailable(dst.deviceId())
                && enabled(src) && enabled(dst)) {
            links.linkDetected(new DefaultLinkDescription(src, dst, type, true));
        }
    }

    private boolean enabled(ConnectPoint cp) {
        org.onosproject.net.Port p = deviceService.getPort(cp);
        return p == null || p.isEnabled(); // a server's NIC port may not be described: its cable counts
    }

    @Override
    public ProviderId id() {
        return PID;
    }

    @Override
    public void triggerProbe(DeviceId deviceId) {
        run(() -> reportDevice(deviceId));
    }

    @Override
    public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
        // a switch takes the role it is given (OpenFlow's role reply)
        devices.receivedRoleReply(deviceId, newRole, newRole);
    }

    @Override
    public boolean isReachable(DeviceId deviceId) {
        return reported.contains(deviceId);
    }

    @Override
    public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
    }
}
