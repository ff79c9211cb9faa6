package org.metron.app.testing;

import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.NetworkView;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.net.PortNumber;
import org.onosproject.net.provider.ProviderId;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** A topology built in code; paths are BFS shortest paths over ONOS {@link DefaultLink}s. */
public final class TestNetwork implements NetworkView {
    private static final ProviderId PID = new ProviderId("test", "metron");
    private final Map<DeviceId, NetworkDevice> devices = new LinkedHashMap<>();
    private final List<Link> links = new ArrayList<>();
    private final Map<ConnectPoint, Set<MacAddress>> hosts = new HashMap<>();

    public TestNetwork device(String id, DeviceRole role, int capacity) {
        DeviceId d = DeviceId.deviceId(id);
        devices.put(d, new NetworkDevice(d, role, capacity));
        return this;
    }

    /** A bidirectional cable between two ports. */
    public TestNetwork cable(String a, long pa, String b, long pb) {
        ConnectPoint x = new ConnectPoint(DeviceId.deviceId(a), PortNumber.portNumber(pa));
        ConnectPoint y = new ConnectPoint(DeviceId.deviceId(b), PortNumber.portNumber(pb));
        links.add(DefaultLink.builder().providerId(PID).src(x).dst(y).type(Link.Type.DIRECT).build());
        links.add(DefaultLink.builder().providerId(PID).src(y).dst(x).type(Link.Type.DIRECT).build());
        return this;
    }

    /** An end host with this MAC hangs off a port (what ONOS's HostService would know). */
    public TestNetwork host(String point, String mac) {
        hosts.computeIfAbsent(ConnectPoint.deviceConnectPoint(point), k -> new HashSet<>())
                .add(MacAddress.valueOf(mac));
        return this;
    }

    /** The device fails: it and its links disappear from the view. */
    public TestNetwork down(String id) {
        DeviceId d = DeviceId.deviceId(id);
        devices.remove(d);
        links.removeIf(l -> l.src().deviceId().equals(d) || l.dst().deviceId().equals(d));
        return this;
    }

    @Override
    public Collection<NetworkDevice> devices() {
        return devices.values();
    }

    @Override
    public Optional<NetworkDevice> device(DeviceId id) {
        return Optional.ofNullable(devices.get(id));
    }

    @Override
    public Set<Link> egressLinks(ConnectPoint from) {
        return links.stream().filter(l -> l.src().equals(from)).collect(java.util.stream.Collectors.toSet());
    }

    /** The cable at {@code a}/{@code pa} is cut: its links disappear from the view. */
    public TestNetwork cut(String a, long pa) {
        ConnectPoint x = new ConnectPoint(DeviceId.deviceId(a), PortNumber.portNumber(pa));
        links.removeIf(l -> l.src().equals(x) || l.dst().equals(x));
        return this;
    }

    @Override
    public Optional<List<Link>> path(ConnectPoint from, ConnectPoint to, Set<DeviceId> avoidDevices,
                                     Set<LinkKey> avoidLinks) {
        DeviceId src = from.deviceId();
        DeviceId dst = to.deviceId();
        if (src.equals(dst)) {
            return Optional.of(List.of());
        }
        Map<DeviceId, Link> via = new HashMap<>();
        Deque<DeviceId> queue = new ArrayDeque<>(List.of(src));
        while (!queue.isEmpty()) {
            DeviceId d = queue.poll();
            for (Link l : links) {
                DeviceId n = l.dst().deviceId();
                if (avoidLinks.contains(LinkKey.linkKey(l)) || avoidDevices.contains(n)) {
                    continue;
                }
                if (l.src().deviceId().equals(d) && !n.equals(src) && !via.containsKey(n)) {
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
            path.add(via.get(d));
        }
        Collections.reverse(path);
        return Optional.of(path);
    }

    @Override
    public Set<MacAddress> hostMacs(ConnectPoint at) {
        return Set.copyOf(hosts.getOrDefault(at, Set.of()));
    }
}
