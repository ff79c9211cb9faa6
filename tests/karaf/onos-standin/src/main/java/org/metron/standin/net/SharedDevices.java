package org.metron.standin.net;

import io.atomix.core.map.AtomicMap;
import io.atomix.core.map.AtomicMapEventListener;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.DefaultPort;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Port;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.store.serializers.KryoNamespaces;
import org.onosproject.store.service.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_ADDED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_REMOVED;
import static org.onosproject.net.device.DeviceEvent.Type.DEVICE_UPDATED;

/**
 * The cluster-wide device store (as core-dist's GossipDeviceStore / ECDeviceStore share theirs in ONOS): what a
 * device's master accepted (the device, its availability, its ports) is written to one Atomix map
 * ("onos-devices", keyed by device id, values Kryo-encoded with ONOS's API namespace: [DefaultDevice, available,
 * [DefaultPort...], term, seq]), and every node applies each change newer than its own record (by the master's
 * stamp, {@link DeviceRecord#olderThan}, as GossipDeviceStore orders peers' updates by their timestamps: a node's
 * being master now does not make an earlier master's last change stale) to its own records, posting the DeviceEvents
 * ONOS would post there (DEVICE_ADDED, DEVICE_AVAILABILITY_CHANGED, DEVICE_UPDATED, PORT_ADDED/UPDATED/REMOVED,
 * DEVICE_REMOVED). A node that starts later catches up from the map. ONOS gossips per-provider descriptions with timestamps; here
 * the master's composed device is shared whole, which is what every node of ONOS ends up showing.
 */
final class SharedDevices {
    private static final Serializer SERIALIZER = Serializer.using(KryoNamespaces.API);
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final AtomicMap<String, byte[]> map;
    private final DeviceManagerStandin local;
    private final MastershipService mastership;
    /** Writes, in order, the latest record of a device (several changes in a row make one write). */
    private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-devstore"));
    private final ExecutorService follower = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-devsync"));
    private final Map<DeviceId, Boolean> queued = new ConcurrentHashMap<>();
    private final AtomicMapEventListener<String, byte[]> listener;

    SharedDevices(AtomicMap<String, byte[]> map, DeviceManagerStandin local, MastershipService mastership) {
        this.map = map;
        this.local = local;
        this.mastership = mastership;
        this.listener = e -> follower.execute(() -> follow(e.key(), e.newValue() == null ? null
                : e.newValue().value()));
        map.addListener(listener);
        for (String key : map.keySet()) {
            follower.execute(() -> {
                io.atomix.utils.time.Versioned<byte[]> v = map.get(key);
                follow(key, v == null ? null : v.value());
            });
        }
    }

    void close() {
        map.removeListener(listener);
        writer.shutdownNow();
        follower.shutdownNow();
    }

    /** The master changed what it holds of the device: the cluster gets the latest record. */
    void publish(DeviceId id) {
        if (queued.put(id, true) != null) {
            return; // a write of this device is pending; it will take the latest record
        }
        writer.execute(() -> {
            queued.remove(id);
            try {
                ArrayList<Object> s = snapshot(id);
                if (s == null) {
                    map.remove(id.toString());
                } else {
                    map.put(id.toString(), SERIALIZER.encode(s));
                }
            } catch (RuntimeException e) {
                log.warn("device {} not shared with the cluster: {}", id, e.toString());
            }
        });
    }

    @SuppressWarnings("unchecked")
    private void follow(String key, byte[] value) {
        DeviceId id = DeviceId.deviceId(key);
        try {
            if (value == null) {
                if (!mastership.isLocalMaster(id)) {
                    removed(id);
                }
                return;
            }
            List<Object> s = SERIALIZER.decode(value);
            apply(id, (Device) s.get(0), (Boolean) s.get(1), (List<Port>) s.get(2), (Long) s.get(3),
                  (Long) s.get(4));
        } catch (RuntimeException e) {
            log.warn("device {} from the cluster not applied here: {}", id, e.toString());
        }
    }

    /** [Device, available, [Port...]] of the device as this node (its master) holds it; null if it has none. */
    private ArrayList<Object> snapshot(DeviceId id) {
        synchronized (local) {
            DeviceRecord r = local.records().get(id);
            if (r == null || r.device == null) {
                return null;
            }
            ArrayList<Object> s = new ArrayList<>();
            s.add(r.device);
            s.add(r.available);
            s.add(new ArrayList<>(r.ports.values()));
            s.add(r.term);
            s.add(r.seq);
            return s;
        }
    }

    private void removed(DeviceId id) {
        synchronized (local) {
            DeviceRecord r = local.records().remove(id);
            if (r != null && r.device != null) {
                local.postEvent(new DeviceEvent(DEVICE_REMOVED, r.device));
            }
        }
    }

    /**
     * A master's record applied here, with the events a change makes (as the store's replicas post them), unless
     * this node's record is as new or newer (its own write coming back, or a stale one overtaken).
     */
    private void apply(DeviceId id, Device device, boolean available, List<Port> ports, long term, long seq) {
        synchronized (local) {
            DeviceRecord r = local.records().computeIfAbsent(
                    id, k -> new DeviceRecord(device.providerId()));
            boolean added = r.device == null;
            if (!added && !r.olderThan(term, seq)) {
                return;
            }
            r.term = term;
            r.seq = seq;
            boolean availabilityChanged = !added && r.available != available;
            boolean updated = !added && !sameDevice(r.device, device);
            r.device = device;
            r.available = available;
            r.updated = System.currentTimeMillis();
            if (added) {
                local.postEvent(new DeviceEvent(DEVICE_ADDED, device));
            } else if (updated) {
                local.postEvent(new DeviceEvent(DEVICE_UPDATED, device));
            }
            if (availabilityChanged && available) {
                local.postEvent(new DeviceEvent(DEVICE_AVAILABILITY_CHANGED, device));
            }
            List<Port> now = new ArrayList<>();
            for (Port p : ports) {
                now.add(new DefaultPort(device, p.number(), p.isEnabled(), p.type(), p.portSpeed(), p.annotations()));
            }
            r.setPorts(now, local::postEvent);
            if (availabilityChanged && !available) {
                local.postEvent(new DeviceEvent(DEVICE_AVAILABILITY_CHANGED, device));
            }
        }
    }

    private static boolean sameDevice(Device a, Device b) {
        return a.type() == b.type() && Objects.equals(a.manufacturer(), b.manufacturer())
                && Objects.equals(a.hwVersion(), b.hwVersion()) && Objects.equals(a.swVersion(), b.swVersion())
                && Objects.equals(a.serialNumber(), b.serialNumber())
                && Objects.equals(a.annotations(), b.annotations());
    }
}
