package org.metron.app.spi;

import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The topology as Metron needs it. Implementations must return a consistent snapshot per call and must be
 * safe to call from any thread; nothing here blocks on the network.
 */
public interface NetworkView {

    /** Every device currently available (switches and servers). */
    Collection<NetworkDevice> devices();

    /** One device, empty when unknown or unavailable. */
    Optional<NetworkDevice> device(DeviceId id);

    /**
     * A shortest path from one connect point to another, as the list of links to traverse in order. An empty
     * list means both points are on the same device (no link to cross). Empty optional: no path.
     * Every link's src is on the device where the previous link's dst (or {@code from}) is.
     *
     * @param from where the traffic enters (e.g. the chain's ingress point)
     * @param to   where it must arrive (e.g. a server NIC port, a server device port)
     * @return links in traversal order, or empty when unreachable
     */
    default Optional<List<Link>> path(ConnectPoint from, ConnectPoint to) {
        return path(from, to, Set.of(), Set.of());
    }

    /**
     * As {@link #path(ConnectPoint, ConnectPoint)}, through none of {@code avoidDevices} and none of
     * {@code avoidLinks}: the path the network would offer once they fail (precomputed failover backups).
     */
    Optional<List<Link>> path(ConnectPoint from, ConnectPoint to, Set<DeviceId> avoidDevices,
                              Set<LinkKey> avoidLinks);

    /**
     * MACs of the end hosts the network knows attached at a connect point (ONOS: HostService's connected hosts,
     * configured or learned); empty when it knows none there. The chain's last hop addresses its frames to the
     * one host at its egress (docs/contracts.md#egress).
     */
    Set<MacAddress> hostMacs(ConnectPoint at);

    /**
     * The live links leaving a port (ONOS: LinkService#getEgressLinks): what a chain's rule sending out of that port
     * depends on, for which a backup is computed. Empty by default (no link backups).
     */
    default Set<Link> egressLinks(ConnectPoint from) {
        return Set.of();
    }
}
