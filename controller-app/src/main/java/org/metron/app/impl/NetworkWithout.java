package org.metron.app.impl;

import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.NetworkView;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The network as it would be once one device fails (that device is gone and no path crosses it) or one link does
 * (no path crosses it, either direction). Placement and rule planning over this view compute the failover backup
 * for that failure before it happens.
 */
final class NetworkWithout implements NetworkView {
    private final NetworkView network;
    /** The failed device; null when a link failed. */
    private final DeviceId failed;
    private final Set<LinkKey> failedLinks;

    NetworkWithout(NetworkView network, DeviceId failed) {
        this.network = network;
        this.failed = failed;
        this.failedLinks = Set.of();
    }

    /** The network once {@code link} fails, both directions. */
    NetworkWithout(NetworkView network, Link link) {
        this.network = network;
        this.failed = null;
        this.failedLinks = Set.of(LinkKey.linkKey(link.src(), link.dst()), LinkKey.linkKey(link.dst(), link.src()));
    }

    @Override
    public Collection<NetworkDevice> devices() {
        return network.devices().stream().filter(d -> !d.id().equals(failed)).collect(Collectors.toList());
    }

    @Override
    public Optional<NetworkDevice> device(DeviceId id) {
        return id.equals(failed) ? Optional.empty() : network.device(id);
    }

    @Override
    public Optional<List<Link>> path(ConnectPoint from, ConnectPoint to, Set<DeviceId> avoidDevices,
                                     Set<LinkKey> avoidLinks) {
        if (from.deviceId().equals(failed) || to.deviceId().equals(failed)) {
            return Optional.empty();
        }
        Set<DeviceId> avoid = new HashSet<>(avoidDevices);
        if (failed != null) {
            avoid.add(failed);
        }
        Set<LinkKey> avoidL = new HashSet<>(avoidLinks);
        avoidL.addAll(failedLinks);
        return network.path(from, to, avoid, avoidL);
    }

    @Override
    public Set<Link> egressLinks(ConnectPoint from) {
        return network.egressLinks(from).stream().filter(l -> !failedLinks.contains(LinkKey.linkKey(l))
                && !l.dst().deviceId().equals(failed)).collect(Collectors.toSet());
    }

    @Override
    public Set<MacAddress> hostMacs(ConnectPoint at) {
        return network.hostMacs(at);
    }
}
