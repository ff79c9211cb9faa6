package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import org.onosproject.net.Device;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.provider.ProviderId;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Consumer;

import static org.onosproject.net.device.DeviceEvent.Type.PORT_ADDED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_REMOVED;
import static org.onosproject.net.device.DeviceEvent.Type.PORT_UPDATED;

/**
 * One device as {@link DeviceManagerStandin}'s store holds it (guarded by the DeviceManagerStandin). A record
 * applied from the cluster's shared store ({@link SharedDevices}) has no description: its master has it.
 */
final class DeviceRecord {
    final ProviderId provider;
    DeviceDescription description;
    Device device;
    boolean available;
    final Map<PortNumber, Port> ports = new TreeMap<>((a, b) -> Long.compare(a.toLong(), b.toLong()));
    List<PortStatistics> stats = ImmutableList.of();
    long updated = System.currentTimeMillis();
    /**
     * When the master last changed this record, as ONOS's MastershipBasedTimestamp orders a device's changes in
     * GossipDeviceStore: the master's mastership term, then its own count. A change from the cluster is applied
     * only when it is newer, so an old master's last word (say, "offline") is kept by whichever node holds the role
     * next, and a stale copy never brings back what its master has since changed.
     */
    long term;
    long seq;

    /** Whether the change stamped (term, seq) is newer than what this record shows. */
    boolean olderThan(long otherTerm, long otherSeq) {
        return otherTerm != term ? otherTerm > term : otherSeq > seq;
    }

    DeviceRecord(ProviderId provider) {
        this.provider = provider;
    }

    /**
     * Makes the ports exactly {@code now}, as the store takes a full port list: each port it no longer has
     * posted PORT_REMOVED, then each of {@code now} put ({@link #putPort}).
     */
    void setPorts(Collection<Port> now, Consumer<DeviceEvent> post) {
        Map<PortNumber, Port> byNumber = new HashMap<>();
        now.forEach(p -> byNumber.put(p.number(), p));
        for (Port old : ImmutableList.copyOf(ports.values())) {
            if (!byNumber.containsKey(old.number())) {
                ports.remove(old.number());
                post.accept(new DeviceEvent(PORT_REMOVED, device, old));
            }
        }
        byNumber.values().forEach(p -> putPort(p, post));
    }

    /** Stores a port: PORT_ADDED if new, PORT_UPDATED if it differs from the one it replaces. */
    void putPort(Port port, Consumer<DeviceEvent> post) {
        Port old = ports.put(port.number(), port);
        if (old == null) {
            post.accept(new DeviceEvent(PORT_ADDED, device, port));
        } else if (!samePort(old, port)) {
            post.accept(new DeviceEvent(PORT_UPDATED, device, port));
        }
    }

    private static boolean samePort(Port a, Port b) {
        return a.isEnabled() == b.isEnabled() && a.type() == b.type() && a.portSpeed() == b.portSpeed()
                && Objects.equals(a.annotations(), b.annotations());
    }
}
