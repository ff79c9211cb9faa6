package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.Iterables;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.mastership.MastershipEvent;
import org.onosproject.mastership.MastershipListener;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.DefaultDevice;
import org.onosproject.net.DefaultPort;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.config.basics.BasicDeviceConfig;
import org.onosproject.net.config.basics.DeviceAnnotationConfig;
import org.onosproject.net.device.DeviceAdminService;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderRegistry;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.provider.AbstractListenerProviderRegistry;
import org.onosproject.net.provider.AbstractProviderService;
import org.onosproject.net.provider.ProviderId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_ADDED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_REMOVED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_UPDATED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_ADDED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_REMOVED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_STATS_UPDATED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_UPDATED;

/**
 * The device subsystem (core-net's DeviceManager + the device store, stand-in) on onos-api's provider registry:
 * providers register, report devices (netcfg "basic"/"annotations" applied, devices netcfg disallows refused),
 * ports, statistics and disconnections; the store records them and fires DeviceEvents. As ONOS does, the
 * provider is told it is MASTER once its device connects, a disconnect disables the device's ports and marks it
 * offline, and every 30 s (ONOS's mastership check period) a device its provider says is unreachable goes offline.
 */
@Component(immediate = true, service = {DeviceService.class, DeviceAdminService.class, DeviceProviderRegistry.class})
public class DeviceManagerStandin
        extends AbstractListenerProviderRegistry<DeviceEvent, DeviceListener, DeviceProvider, DeviceProviderService>
        implements DeviceAdminService, DeviceProviderRegistry {
    static final long REACHABILITY_CHECK_SECONDS = 30;
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final Map<DeviceId, Record> records = new ConcurrentHashMap<>();
    private final NetworkConfigListener netcfgListener = this::netcfgChanged;
    private final MastershipListener mastershipListener = this::mastershipChanged;
    private ScheduledExecutorService background;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigService netcfg;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastership;

    /** One device as the store holds it. */
    private static final class Record {
        final ProviderId provider;
        DeviceDescription description;
        Device device;
        boolean available;
        final Map<PortNumber, Port> ports = new TreeMap<>((a, b) -> Long.compare(a.toLong(), b.toLong()));
        List<PortStatistics> stats = ImmutableList.of();
        long updated = System.currentTimeMillis();

        Record(ProviderId provider) {
            this.provider = provider;
        }
    }

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(DeviceEvent.class, listenerRegistry);
        netcfg.addListener(netcfgListener);
        mastership.addListener(mastershipListener);
        background = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "standin-devices"));
        background.scheduleWithFixedDelay(this::reachabilityCheck, REACHABILITY_CHECK_SECONDS,
                                          REACHABILITY_CHECK_SECONDS, TimeUnit.SECONDS);
    }

    @Deactivate
    protected void deactivate() {
        background.shutdownNow();
        netcfg.removeListener(netcfgListener);
        mastership.removeListener(mastershipListener);
        dispatcher.removeSink(DeviceEvent.class);
    }

    @Override
    protected DeviceProviderService createProviderService(DeviceProvider provider) {
        return new ProviderService(provider);
    }

    // ------------------------------------------------------------------ store
    private Device device(Record r, DeviceId id) {
        DeviceDescription d = DeviceNetcfg.combine(netcfg, id, r.description);
        return new DefaultDevice(r.provider, id, d.type(), d.manufacturer(), d.hwVersion(), d.swVersion(),
                                 d.serialNumber(), d.chassisId(), d.annotations());
    }

    private static Port port(Device device, PortDescription p) {
        return new DefaultPort(device, p.portNumber(), p.isEnabled(), p.type(), p.portSpeed(), p.annotations());
    }

    private static boolean samePort(Port a, Port b) {
        return a.isEnabled() == b.isEnabled() && a.type() == b.type() && a.portSpeed() == b.portSpeed()
                && Objects.equals(a.annotations(), b.annotations());
    }

    private synchronized void markOffline(DeviceId id, boolean disablePorts) {
        Record r = records.get(id);
        if (r == null || !r.available) {
            return;
        }
        if (disablePorts) {
            for (Port p : ImmutableList.copyOf(r.ports.values())) {
                if (p.isEnabled()) {
                    Port off = new DefaultPort(r.device, p.number(), false, p.type(), p.portSpeed(),
                                               p.annotations());
                    r.ports.put(p.number(), off);
                    post(new DeviceEvent(PORT_UPDATED, r.device, off));
                }
            }
        }
        r.available = false;
        r.updated = System.currentTimeMillis();
        post(new DeviceEvent(DEVICE_AVAILABILITY_CHANGED, r.device));
    }

    private void reachabilityCheck() {
        for (Map.Entry<DeviceId, Record> e : records.entrySet()) {
            DeviceProvider p = getProvider(e.getValue().provider);
            try {
                if (e.getValue().available && p != null && !p.isReachable(e.getKey())) {
                    log.info("device {} is not reachable: marking it offline", e.getKey());
                    markOffline(e.getKey(), false);
                }
            } catch (RuntimeException ex) {
                log.warn("reachability check of {} failed", e.getKey(), ex);
            }
        }
    }

    /**
     * As DeviceManager's InternalMastershipListener: when a device's master changes (in a cluster, its master node
     * died or gave it up), the provider of a device this node knows is told the role this node has now.
     */
    private void mastershipChanged(MastershipEvent event) {
        if (event.type() != MastershipEvent.Type.MASTER_CHANGED) {
            return;
        }
        Record r = records.get(event.subject());
        DeviceProvider p = r == null ? null : getProvider(r.provider);
        if (p != null) {
            MastershipRole role = mastership.getLocalRole(event.subject());
            background.execute(() -> p.roleChanged(event.subject(), role));
        }
    }

    private void netcfgChanged(NetworkConfigEvent event) {
        if ((event.configClass() == BasicDeviceConfig.class || event.configClass() == DeviceAnnotationConfig.class)
                && event.subject() instanceof DeviceId) {
            synchronized (this) {
                DeviceId id = (DeviceId) event.subject();
                Record r = records.get(id);
                if (r != null) {
                    r.device = device(r, id);
                    post(new DeviceEvent(DEVICE_UPDATED, r.device));
                }
            }
        }
    }

    /** What one provider reports, as core-net's DeviceManager.InternalDeviceProviderService takes it. */
    private final class ProviderService extends AbstractProviderService<DeviceProvider>
            implements DeviceProviderService {
        ProviderService(DeviceProvider provider) {
            super(provider);
        }

        @Override
        public void deviceConnected(DeviceId id, DeviceDescription description) {
            checkValidity();
            BasicDeviceConfig cfg = netcfg.getConfig(id, BasicDeviceConfig.class);
            if (cfg != null && !cfg.isAllowed()) {
                log.warn("device {} is not allowed by netcfg: refused", id);
                return;
            }
            DeviceEvent event;
            synchronized (DeviceManagerStandin.this) {
                Record r = records.computeIfAbsent(id, k -> new Record(provider().id()));
                boolean added = r.device == null;
                boolean cameBack = !added && !r.available;
                r.description = description;
                r.device = device(r, id);
                r.available = description.isDefaultAvailable();
                r.updated = System.currentTimeMillis();
                event = new DeviceEvent(added ? DEVICE_ADDED : cameBack ? DEVICE_AVAILABILITY_CHANGED
                        : DEVICE_UPDATED, r.device);
                post(event);
            }
            // ONOS asks for mastership of a new device, then tells its provider the role it got
            mastership.requestRoleFor(id).thenAcceptAsync(role -> provider().roleChanged(id, role), background);
        }

        @Override
        public void deviceDisconnected(DeviceId id) {
            checkValidity();
            markOffline(id, true);
        }

        @Override
        public void updatePorts(DeviceId id, List<PortDescription> descriptions) {
            checkValidity();
            synchronized (DeviceManagerStandin.this) {
                Record r = records.get(id);
                if (r == null) {
                    log.warn("ports of unknown device {} ignored", id);
                    return;
                }
                Map<PortNumber, PortDescription> now = descriptions.stream().filter(p -> !p.isRemoved())
                        .collect(Collectors.toMap(PortDescription::portNumber, p -> p, (a, b) -> b));
                for (Port old : ImmutableList.copyOf(r.ports.values())) {
                    if (!now.containsKey(old.number())) {
                        r.ports.remove(old.number());
                        post(new DeviceEvent(PORT_REMOVED, r.device, old));
                    }
                }
                now.values().forEach(p -> putPort(r, p));
                r.updated = System.currentTimeMillis();
            }
        }

        @Override
        public void deletePort(DeviceId id, PortDescription description) {
            checkValidity();
            synchronized (DeviceManagerStandin.this) {
                Record r = records.get(id);
                Port old = r == null ? null : r.ports.remove(description.portNumber());
                if (old != null) {
                    post(new DeviceEvent(PORT_REMOVED, r.device, old));
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
            synchronized (DeviceManagerStandin.this) {
                Record r = records.get(id);
                if (r == null) {
                    log.warn("port status of unknown device {} ignored", id);
                    return;
                }
                putPort(r, description);
            }
        }

        private void putPort(Record r, PortDescription p) {
            Port port = port(r.device, p);
            Port old = r.ports.put(p.portNumber(), port);
            if (old == null) {
                post(new DeviceEvent(PORT_ADDED, r.device, port));
            } else if (!samePort(old, port)) {
                post(new DeviceEvent(PORT_UPDATED, r.device, port));
            }
        }

        @Override
        public void receivedRoleReply(DeviceId id, MastershipRole requested, MastershipRole response) {
            log.debug("role reply for {}: asked {}, got {}", id, requested, response);
        }

        @Override
        public void updatePortStatistics(DeviceId id, Collection<PortStatistics> statistics) {
            checkValidity();
            Record r = records.get(id);
            if (r != null) {
                r.stats = ImmutableList.copyOf(statistics);
                post(new DeviceEvent(PORT_STATS_UPDATED, r.device));
            }
        }

        @Override
        public DeviceDescription getDeviceDescription(DeviceId id) {
            Record r = records.get(id);
            return r == null ? null : r.description;
        }
    }

    // ------------------------------------------------------------------ DeviceService
    @Override
    public int getDeviceCount() {
        return records.size();
    }

    @Override
    public Iterable<Device> getDevices() {
        return records.values().stream().map(r -> r.device).collect(ImmutableList.toImmutableList());
    }

    @Override
    public Iterable<Device> getDevices(Device.Type type) {
        return Iterables.filter(getDevices(), d -> d.type() == type);
    }

    @Override
    public Iterable<Device> getAvailableDevices() {
        return records.values().stream().filter(r -> r.available).map(r -> r.device)
                .collect(ImmutableList.toImmutableList());
    }

    @Override
    public Iterable<Device> getAvailableDevices(Device.Type type) {
        return Iterables.filter(getAvailableDevices(), d -> d.type() == type);
    }

    @Override
    public Device getDevice(DeviceId id) {
        Record r = records.get(id);
        return r == null ? null : r.device;
    }

    @Override
    public MastershipRole getRole(DeviceId id) {
        return mastership.getLocalRole(id);
    }

    @Override
    public synchronized List<Port> getPorts(DeviceId id) {
        Record r = records.get(id);
        return r == null ? ImmutableList.of() : ImmutableList.copyOf(r.ports.values());
    }

    @Override
    public List<PortStatistics> getPortStatistics(DeviceId id) {
        Record r = records.get(id);
        return r == null ? ImmutableList.of() : r.stats;
    }

    @Override
    public List<PortStatistics> getPortDeltaStatistics(DeviceId id) {
        return getPortStatistics(id);
    }

    @Override
    public synchronized Port getPort(DeviceId id, PortNumber number) {
        Record r = records.get(id);
        return r == null ? null : r.ports.get(number);
    }

    @Override
    public boolean isAvailable(DeviceId id) {
        Record r = records.get(id);
        return r != null && r.available;
    }

    @Override
    public String localStatus(DeviceId id) {
        Record r = records.get(id);
        return r == null ? null : (r.available ? "connected " : "disconnected ")
                + (System.currentTimeMillis() - r.updated) / 1000 + "s ago";
    }

    @Override
    public long getLastUpdatedInstant(DeviceId id) {
        Record r = records.get(id);
        return r == null ? 0 : r.updated;
    }

    // ------------------------------------------------------------------ DeviceAdminService
    @Override
    public synchronized void removeDevice(DeviceId id) {
        Record r = records.remove(id);
        if (r != null) {
            post(new DeviceEvent(DEVICE_REMOVED, r.device));
        }
    }

    @Override
    public void changePortState(DeviceId id, PortNumber port, boolean enable) {
        Record r = records.get(id);
        DeviceProvider p = r == null ? null : getProvider(r.provider);
        if (p != null) {
            p.changePortState(id, port, enable);
        }
    }

    @Override
    public synchronized void removeDevicePorts(DeviceId id) {
        Record r = records.get(id);
        if (r != null) {
            for (Port p : ImmutableList.copyOf(r.ports.values())) {
                r.ports.remove(p.number());
                post(new DeviceEvent(PORT_REMOVED, r.device, p));
            }
        }
    }
}
