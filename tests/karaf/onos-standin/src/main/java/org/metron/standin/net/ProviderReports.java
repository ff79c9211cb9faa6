package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import org.onosproject.net.DefaultPort;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.Port;
import org.onosproject.net.config.basics.BasicDeviceConfig;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.provider.AbstractProviderService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_ADDED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_UPDATED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_REMOVED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_STATS_UPDATED;

/**
 * What one device provider reports, as core-net's DeviceManager.InternalDeviceProviderService takes it, for
 * {@link DeviceManagerStandin}: devices netcfg disallows are refused, mastership is requested (and waited for)
 * on connection, and port changes of a device this node does not master are dropped. Changes are made under the
 * manager's lock, and its {@code post} fires (and, in a cluster, shares) them.
 */
final class ProviderReports extends AbstractProviderService<DeviceProvider> implements DeviceProviderService {
    private final Logger log = LoggerFactory.getLogger(DeviceManagerStandin.class);
    private final DeviceManagerStandin devices;

    ProviderReports(DeviceManagerStandin devices, DeviceProvider provider) {
        super(provider);
        this.devices = devices;
    }

    @Override
    public void deviceConnected(DeviceId id, DeviceDescription description) {
        checkValidity();
        BasicDeviceConfig cfg = devices.netcfg.getConfig(id, BasicDeviceConfig.class);
        if (cfg != null && !cfg.isAllowed()) {
            log.warn("device {} is not allowed by netcfg: refused", id);
            return;
        }
        // ONOS 2.7 waits for the election, then stores the device and applies the role it got
        MastershipRole role = devices.mastership.requestRoleFor(id).join();
        log.info("Local role is {} for {}", role, id);
        DeviceEvent event;
        synchronized (devices) {
            DeviceRecord r = devices.records().computeIfAbsent(id, k -> new DeviceRecord(provider().id()));
            boolean added = r.device == null;
            boolean cameBack = !added && !r.available;
            r.description = description;
            r.device = devices.device(r, id);
            r.available = description.isDefaultAvailable();
            r.updated = System.currentTimeMillis();
            event = new DeviceEvent(added ? DEVICE_ADDED : cameBack ? DEVICE_AVAILABILITY_CHANGED
                    : DEVICE_UPDATED, r.device);
            devices.post(event);
        }
        if (role != MastershipRole.NONE) {
            provider().roleChanged(id, role);
        }
        log.info("Device {} connected", id);
    }

    /** Ports disabled; offline only by its master (else it stays available); the role given up. */
    @Override
    public void deviceDisconnected(DeviceId id) {
        checkValidity();
        log.info("Device {} disconnected from this node", id);
        if (devices.mastership.isLocalMaster(id)) {
            devices.markOffline(id, true);
        } else {
            log.info("{} is not mastered by this node: it stays available", id);
        }
        devices.mastership.relinquishMastership(id);
    }

    @Override
    public void updatePorts(DeviceId id, List<PortDescription> descriptions) {
        checkValidity();
        if (!devices.master(id, descriptions.size() + " port updates")) {
            return;
        }
        synchronized (devices) {
            DeviceRecord r = devices.records().get(id);
            if (r == null) {
                log.warn("ports of unknown device {} ignored", id);
                return;
            }
            r.setPorts(descriptions.stream().filter(p -> !p.isRemoved()).map(p -> port(r.device, p))
                    .collect(Collectors.toList()), devices::post);
            r.updated = System.currentTimeMillis();
        }
    }

    @Override
    public void deletePort(DeviceId id, PortDescription description) {
        checkValidity();
        if (!devices.master(id, "a port removal")) {
            return;
        }
        synchronized (devices) {
            DeviceRecord r = devices.records().get(id);
            Port old = r == null ? null : r.ports.remove(description.portNumber());
            if (old != null) {
                devices.post(new DeviceEvent(PORT_REMOVED, r.device, old));
            }
        }
    }

    @Override
    public void portStatusChanged(DeviceId id, PortDescription description) {
        checkValidity();
        if (description.isRemoved()) {
            deletePort(id, description);
            return;
        }
        if (!devices.master(id, "a port update")) {
            return;
        }
        synchronized (devices) {
            DeviceRecord r = devices.records().get(id);
            if (r == null) {
                log.warn("port status of unknown device {} ignored", id);
                return;
            }
            r.putPort(port(r.device, description), devices::post);
        }
    }

    private static Port port(Device device, PortDescription p) {
        return new DefaultPort(device, p.portNumber(), p.isEnabled(), p.type(), p.portSpeed(), p.annotations());
    }

    @Override
    public void receivedRoleReply(DeviceId id, MastershipRole requested, MastershipRole response) {
        log.debug("got reply to a role request for {}: asked for {}, and got {}", id, requested, response);
        if (!Objects.equals(requested, response)) {
            // DeviceManager: the device did not take the role; a refused MASTER goes to another node
            log.warn("Failed to assert role onto device {}. requested={}, response={}", id, requested, response);
            if (requested == MastershipRole.MASTER) {
                devices.mastership.relinquishMastership(id);
            }
        }
    }

    @Override
    public void updatePortStatistics(DeviceId id, Collection<PortStatistics> statistics) {
        checkValidity();
        DeviceRecord r = devices.records().get(id);
        if (r != null) {
            r.stats = ImmutableList.copyOf(statistics);
            devices.post(new DeviceEvent(PORT_STATS_UPDATED, r.device));
        }
    }

    @Override
    public DeviceDescription getDeviceDescription(DeviceId id) {
        DeviceRecord r = devices.records().get(id);
        return r == null ? null : r.description;
    }
}
