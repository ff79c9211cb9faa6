package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import org.onosproject.net.Device;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.provider.ProviderId;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
}
