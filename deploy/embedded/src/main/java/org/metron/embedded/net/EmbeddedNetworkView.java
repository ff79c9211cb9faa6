package org.metron.embedded.net;

import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.NetworkView;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OpenFlowController;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.net.provider.ProviderId;
import org.projectfloodlight.openflow.protocol.OFPortConfig;
import org.projectfloodlight.openflow.protocol.OFPortDesc;
import org.projectfloodlight.openflow.protocol.OFPortState;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The controller's network view on one machine: cabling from the topology's state file, liveness from
 * OpenFlow (a switch is a device while it is connected; a link is usable while both its switch ports are up,
 * as PORT_STATUS reports them). Paths are BFS shortest paths, recomputed per call from the live state. The
 * topology's hosts are its host database, as configured hosts are in ONOS.
 */
public final class EmbeddedNetworkView implements NetworkView {
    /** OVS userspace tables are bounded by memory, not by a TCAM; this is the budget Metron plans with. */
    public static final int OVS_RULE_CAPACITY = 100_000;
    private static final ProviderId PID = new ProviderId("of", "org.metron.embedded");

    private final NetworkFile net;
    private final OpenFlowController openflow;
    private final List<Link> links = new ArrayList<>();

    public EmbeddedNetworkView(NetworkFile net, OpenFlowController openflow) {
        this.net = net;
        this.openflow = openflow;
        for (List<ConnectPoint> l : net.links) {
            links.add(link(l.get(0), l.get(1)));
            links.add(link(l.get(1), l.get(0)));
        }
    }

    private static Link link(ConnectPoint a, ConnectPoint b) {
        return DefaultLink.builder().providerId(PID).src(a).dst(b).type(Link.Type.DIRECT).build();
    }

    private Optional<OfSwitch> connected(DeviceId id) {
        return openflow.switches().stream().filter(s -> s.deviceId().equals(id.toString()) && s.isConnected())
                .findFirst();
    }

    @Override
    public Collection<NetworkDevice> devices() {
        List<NetworkDevice> out = new ArrayList<>();
        net.switches.values().forEach(id -> device(id).ifPresent(out::add));
        net.servers.forEach(s -> out.add(new NetworkDevice(s.id, DeviceRole.SERVER, 0)));
        return out;
    }

    @Override
    public Optional<NetworkDevice> device(DeviceId id) {
        if (net.switches.containsValue(id)) {
            return connected(id).map(s -> new NetworkDevice(id, DeviceRole.OPENFLOW_SWITCH, OVS_RULE_CAPACITY));
        }
        return net.servers.stream().filter(s -> s.id.equals(id)).findFirst()
                .map(s -> new NetworkDevice(id, DeviceRole.SERVER, 0));
    }

    /** Whether traffic can leave or enter through this point now. Server NICs count as up. */
    boolean up(ConnectPoint p) {
        if (!net.switches.containsValue(p.deviceId())) {
            return true;
        }
        Optional<OfSwitch> sw = connected(p.deviceId());
        if (sw.isEmpty()) {
            return false;
        }
        OFPortDesc d = sw.get().ports().get((int) p.port().toLong());
        return d != null && !d.getState().contains(OFPortState.LINK_DOWN)
                && !d.getConfig().contains(OFPortConfig.PORT_DOWN);
    }

    @Override
    public Set<Link> egressLinks(ConnectPoint from) {
        Set<Link> out = new java.util.HashSet<>();
        for (Link l : links) {
            if (l.src().equals(from) && up(l.src()) && up(l.dst())) {
                out.add(l);
            }
        }
        return out;
    }

    @Override
    public Optional<List<Link>> path(ConnectPoint from, ConnectPoint to, Set<DeviceId> avoidDevices,
                                     Set<LinkKey> avoidLinks) {
        DeviceId src = from.deviceId();
        DeviceId dst = to.deviceId();
        if (src.equals(dst)) {
            return Optional.of(List.of());
        }
        List<Link> live = new ArrayList<>();
        for (Link l : links) {
            if (up(l.src()) && up(l.dst()) && !avoidLinks.contains(LinkKey.linkKey(l))
                    && !avoidDevices.contains(l.src().deviceId()) && !avoidDevices.contains(l.dst().deviceId())) {
                live.add(l);
            }
        }
        Map<DeviceId, Link> via = new HashMap<>();
        Deque<DeviceId> queue = new ArrayDeque<>(List.of(src));
        while (!queue.isEmpty()) {
            DeviceId d = queue.poll();
            for (Link l : live) {
                DeviceId n = l.dst().deviceId();
                // Servers are endpoints, never transit: traffic is not forwarded through a server's NICs.
                boolean transit = !n.equals(dst) && net.servers.stream().anyMatch(s -> s.id.equals(n));
                if (l.src().deviceId().equals(d) && !n.equals(src) && !via.containsKey(n) && !transit) {
                    via.put(n, l);
                    queue.add(n);
                }
            }
        }
        if (!via.containsKey(dst)) {
            return Optional.empty();
        }
        List<Link> path = new ArrayList<>();
        for (DeviceId d = dst; !d.equals(src); d = via.get(d).src().deviceId()) {
            path.add(0, via.get(d));
        }
        return Optional.of(path);
    }

    @Override
    public Set<MacAddress> hostMacs(ConnectPoint at) {
        return net.hosts.stream().filter(h -> h.attachment.equals(at)).map(h -> MacAddress.valueOf(h.mac))
                .collect(Collectors.toUnmodifiableSet());
    }
}
