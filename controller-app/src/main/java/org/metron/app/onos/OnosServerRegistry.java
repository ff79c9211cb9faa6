package org.metron.app.onos;

import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.provider.MetronServerConfig;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.drivers.server.AgentAccess;
import org.metron.drivers.server.MetronDeviceIds;
import org.onosproject.net.AnnotationKeys;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.Port;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.link.LinkService;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

/**
 * {@link ServerRegistry} over ONOS's devices: each available {@code metron:host:port} device (the drivers' server
 * provider makes them from netcfg), its agent client from the device's driver ({@link AgentAccess} through ONOS's
 * driver subsystem), and for each NIC port the switch port its link leads to — or, for a NIC without a link (a server
 * gone unavailable loses its links, not its cable), the switch port its netcfg {@code nics} names. The netcfg entries
 * ONOS refused come from the drivers' {@link ServerConfigErrors} service, as they are.
 */
@Component(immediate = true, service = ServerRegistry.class)
public class OnosServerRegistry implements ServerRegistry {

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkService linkService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DriverService driverService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigService netcfgService;

    /** The drivers bundle's list of refused server netcfg entries (its MetronServerProvider offers it). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected volatile ServerConfigErrors configErrors;

    @Override
    public Collection<MetronServer> servers() {
        return StreamSupport.stream(deviceService.getAvailableDevices().spliterator(), false)
                .map(Device::id).filter(MetronDeviceIds::isMetronServer)
                .sorted(Comparator.comparing(DeviceId::toString))
                .map(this::describe).collect(Collectors.toList());
    }

    @Override
    public Optional<MetronServer> server(DeviceId id) {
        if (!MetronDeviceIds.isMetronServer(id) || deviceService.getDevice(id) == null) {
            return Optional.empty();
        }
        return Optional.of(describe(id));
    }

    @Override
    public List<ServerConfigErrors.Refused> refusedConfigs() {
        ServerConfigErrors errors = configErrors;
        return errors == null ? List.of() : errors.refused();
    }

    private MetronServer describe(DeviceId id) {
        Map<String, ConnectPoint> attachments = new HashMap<>();
        List<Port> ports = deviceService.getPorts(id);
        for (Port p : ports) {
            String nic = p.number().hasName() ? p.number().name() : p.annotations().value(AnnotationKeys.PORT_NAME);
            if (nic == null) {
                continue;
            }
            for (Link l : linkService.getEgressLinks(new ConnectPoint(id, p.number()))) {
                attachments.put(nic, l.dst());
            }
        }
        // a lost server's group comes back by the path to its server, planned from this cabling: without it the
        // rules only that path needed (its return rules) would stay (docs/scaling.md, "A lost server")
        MetronServerConfig cfg = netcfgService.getConfig(id, MetronServerConfig.class);
        if (cfg != null && cfg.isValid()) {
            cfg.nics().forEach(attachments::putIfAbsent);
        }
        return new MetronServer(id, driverService.createHandler(id).behaviour(AgentAccess.class).agent(), attachments);
    }
}
