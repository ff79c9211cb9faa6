package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.Iterables;
import org.metron.standin.cluster.AtomixNode;
import org.onosproject.cluster.ClusterService;
import org.onosproject.event.EventDeliveryService;
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
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.provider.AbstractListenerProviderRegistry;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_REMOVED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_UPDATED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_STATS_UPDATED;

/**
 * The device subsystem (core-net's DeviceManager + the device store, stand-in) on onos-api's provider registry:
 * providers register, report devices (netcfg "basic"/"annotations" applied, devices netcfg disallows refused),
 * ports, statistics and disconnections; the store records them and fires DeviceEvents.
 * <p>
 * Mastership as ONOS 2.7.0's DeviceManager handles it (read from its sources, measured in a real ONOS 2.7.0):
 * <ul>
 *   <li>{@code deviceConnected} requests mastership and waits for it, stores the device and tells the provider
 *       {@code roleChanged} with the role it got;</li>
 *   <li>the MASTER_CHANGED that follows is handled on a background thread (DeviceManager's
 *       InternalMastershipListener/handleMastershipEvent): the provider's {@code isReachable} is asked, and on a
 *       no this node logs "... cannot reach the device. Relinquishing role." at WARN and relinquishes: the device
 *       stays available with no master; on a yes the role is reasserted ({@code roleChanged} + {@code
 *       triggerProbe});</li>
 *   <li>port updates ({@code updatePorts}, {@code portStatusChanged}, {@code deletePort}) and netcfg description
 *       updates of a device this node does not master are dropped (logged);</li>
 *   <li>{@code deviceDisconnected} disables the device's ports, marks it offline only if this node masters it, and
 *       relinquishes the role;</li>
 *   <li>{@code receivedRoleReply} refusing a requested MASTER relinquishes it;</li>
 *   <li>a periodic mastership check (DeviceManager's mastershipCheck, every minute as in ONOS; {@code
 *       -Dstandin.mastershipCheckMs} shortens it for a test) reasserts a role for a reachable device with none
 *       and marks an unreachable available device offline.</li>
 * </ul>
 * In a cluster, what this node accepts for a device it masters goes to every node ({@link SharedDevices}).
 * What a provider reports is taken by {@link ProviderReports}; roles are kept by {@link DeviceRoles}.
 */
@Component(immediate = true, service = {DeviceService.class, DeviceAdminService.class, DeviceProviderRegistry.class})
public class DeviceManagerStandin
        extends AbstractListenerProviderRegistry<DeviceEvent, DeviceListener, DeviceProvider, DeviceProviderService>
        implements DeviceAdminService, DeviceProviderRegistry {
    /** ONOS's DeviceManager checks mastership every minute. */
    static final long MASTERSHIP_CHECK_MS = 60_000;
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final Map<DeviceId, DeviceRecord> records = new ConcurrentHashMap<>();
    /** This node's count of the changes it made as a master (the second half of a record's stamp). */
    private final AtomicLong stamps = new AtomicLong();
    private final NetworkConfigListener netcfgListener = this::netcfgChanged;
    // as ONOS's InternalMastershipListener: handled on the background thread, not the event dispatcher's
    private final MastershipListener mastershipListener = this::mastershipChanged;
    private ScheduledExecutorService background;
    private DeviceRoles roles;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigService netcfg;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastership;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ClusterService cluster;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    /** In a cluster: the device store every node shares (null for one node). */
    private volatile SharedDevices shared;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(DeviceEvent.class, listenerRegistry);
        netcfg.addListener(netcfgListener);
        background = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "standin-devices"));
        roles = new DeviceRoles(this, mastership, cluster.getLocalNode().id());
        mastership.addListener(mastershipListener);
        long checkMs = Long.getLong("standin.mastershipCheckMs", MASTERSHIP_CHECK_MS);
        background.scheduleWithFixedDelay(roles::mastershipCheck, checkMs, checkMs, TimeUnit.MILLISECONDS);
        if (atomixNode.atomix() != null) {
            shared = new SharedDevices(atomixNode.bytesMap("onos-devices"), this, mastership);
        }
        log.info("Started (mastership checked every {} ms)", checkMs);
    }

    @Deactivate
    protected void deactivate() {
        if (shared != null) {
            shared.close();
        }
        mastership.removeListener(mastershipListener);
        background.shutdownNow();
        netcfg.removeListener(netcfgListener);
        dispatcher.removeSink(DeviceEvent.class);
    }

    @Override
    protected DeviceProviderService createProviderService(DeviceProvider provider) {
        return new ProviderReports(this, provider);
    }

    // ------------------------------------------------------------------ store
    /** Posts the event; in a cluster, what this node accepted as a device's master goes to every node. */
    @Override
    protected void post(DeviceEvent event) {
        super.post(event);
        SharedDevices s = shared;
        DeviceId id = event.subject().id();
        if (s != null && event.type() != PORT_STATS_UPDATED && mastership.isLocalMaster(id)) {
            // stamped now, while this node is master in this term (it may give the role up before the write)
            DeviceRecord r = records.get(id);
            if (r != null) {
                r.term = mastership.getMastershipFor(id).term();
                r.seq = stamps.incrementAndGet();
            }
            s.publish(id);
        }
    }

    /** An event of a change the master made (applied from the shared store): posted, not shared again. */
    void postEvent(DeviceEvent event) {
        super.post(event);
    }

    Map<DeviceId, DeviceRecord> records() {
        return records;
    }

    /** The device a record's description makes, with netcfg's "basic" and "annotations" applied. */
    Device device(DeviceRecord r, DeviceId id) {
        DeviceDescription d = DeviceNetcfg.combine(netcfg, id, r.description);
        return new DefaultDevice(r.provider, id, d.type(), d.manufacturer(), d.hwVersion(), d.swVersion(),
                                 d.serialNumber(), d.chassisId(), d.annotations());
    }

    synchronized void markOffline(DeviceId id, boolean disablePorts) {
        DeviceRecord r = records.get(id);
        if (r == null || !r.available) {
            return;
        }
        if (disablePorts) {
            for (Port p : ImmutableList.copyOf(r.ports.values())) {
                if (p.isEnabled()) {
                    r.putPort(new DefaultPort(r.device, p.number(), false, p.type(), p.portSpeed(), p.annotations()),
                              this::post);
                }
            }
        }
        r.available = false;
        r.updated = System.currentTimeMillis();
        post(new DeviceEvent(DEVICE_AVAILABILITY_CHANGED, r.device));
    }

    private void mastershipChanged(org.onosproject.mastership.MastershipEvent event) {
        background.execute(() -> roles.handleMastershipEvent(event));
    }

    /** As DeviceManager's getProvider(DeviceId): the stored device's provider, else the one of its id's scheme. */
    DeviceProvider providerOf(DeviceId id) {
        DeviceRecord r = records.get(id);
        return r == null ? getProvider(id) : getProvider(r.provider);
    }

    boolean isReachable(DeviceId id) {
        DeviceProvider p = providerOf(id);
        return p != null && p.isReachable(id);
    }

    synchronized void markOnline(DeviceId id) {
        DeviceRecord r = records.get(id);
        if (r != null && !r.available) {
            r.available = true;
            r.updated = System.currentTimeMillis();
            post(new DeviceEvent(DEVICE_AVAILABILITY_CHANGED, r.device));
        }
    }

    /** Whether this node may change what the store holds of the device: ONOS's store takes its master's word. */
    boolean master(DeviceId id, String what) {
        if (mastership.isLocalMaster(id)) {
            return true;
        }
        log.info("Ignoring {} of {}: this node is not its master", what, id);
        return false;
    }

    private void netcfgChanged(NetworkConfigEvent event) {
        if ((event.configClass() == BasicDeviceConfig.class || event.configClass() == DeviceAnnotationConfig.class)
                && event.subject() instanceof DeviceId) {
            synchronized (this) {
                DeviceId id = (DeviceId) event.subject();
                DeviceRecord r = records.get(id);
                if (r != null && r.description != null && master(id, "a netcfg description update")) {
                    r.device = device(r, id);
                    post(new DeviceEvent(DEVICE_UPDATED, r.device));
                }
            }
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
        DeviceRecord r = records.get(id);
        return r == null ? null : r.device;
    }

    @Override
    public MastershipRole getRole(DeviceId id) {
        return mastership.getLocalRole(id);
    }

    @Override
    public synchronized List<Port> getPorts(DeviceId id) {
        DeviceRecord r = records.get(id);
        return r == null ? ImmutableList.of() : ImmutableList.copyOf(r.ports.values());
    }

    @Override
    public List<PortStatistics> getPortStatistics(DeviceId id) {
        DeviceRecord r = records.get(id);
        return r == null ? ImmutableList.of() : r.stats;
    }

    @Override
    public List<PortStatistics> getPortDeltaStatistics(DeviceId id) {
        return getPortStatistics(id);
    }

    @Override
    public synchronized Port getPort(DeviceId id, PortNumber number) {
        DeviceRecord r = records.get(id);
        return r == null ? null : r.ports.get(number);
    }

    @Override
    public boolean isAvailable(DeviceId id) {
        DeviceRecord r = records.get(id);
        return r != null && r.available;
    }

    @Override
    public String localStatus(DeviceId id) {
        DeviceRecord r = records.get(id);
        return r == null ? null : (r.available ? "connected " : "disconnected ")
                + (System.currentTimeMillis() - r.updated) / 1000 + "s ago";
    }

    @Override
    public long getLastUpdatedInstant(DeviceId id) {
        DeviceRecord r = records.get(id);
        return r == null ? 0 : r.updated;
    }

    // ------------------------------------------------------------------ DeviceAdminService
    @Override
    public synchronized void removeDevice(DeviceId id) {
        DeviceRecord r = records.remove(id);
        if (r != null) {
            post(new DeviceEvent(DEVICE_REMOVED, r.device));
        }
    }

    @Override
    public void changePortState(DeviceId id, PortNumber port, boolean enable) {
        DeviceRecord r = records.get(id);
        DeviceProvider p = r == null ? null : getProvider(r.provider);
        if (p != null) {
            p.changePortState(id, port, enable);
        }
    }

    @Override
    public synchronized void removeDevicePorts(DeviceId id) {
        DeviceRecord r = records.get(id);
        if (r != null) {
            r.setPorts(List.of(), this::post);
        }
    }
}
