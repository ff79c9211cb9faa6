package org.metron.drivers.provider;

import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.link.LinkDescription;
import org.onosproject.net.link.LinkProvider;
import org.onosproject.net.link.LinkProviderService;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What ONOS's device and link managers are told by a provider, kept as ONOS's stores would keep it: the devices
 * reported connected (available) with their description and ports, and the links reported and not vanished.
 */
final class RecordingProviderServices {
    final Map<DeviceId, DeviceDescription> available = new ConcurrentHashMap<>();
    final Map<DeviceId, List<PortDescription>> ports = new ConcurrentHashMap<>();
    final Set<LinkDescription> links = ConcurrentHashMap.newKeySet();
    final List<String> calls = new CopyOnWriteArrayList<>();
    /** What the provider's isReachable answered when each device was announced (ONOS asks right then). */
    final List<Boolean> reachableWhenConnected = new CopyOnWriteArrayList<>();
    /** The provider's isReachable, as ONOS's DeviceManager calls it after granting mastership. */
    volatile java.util.function.Predicate<DeviceId> isReachable = id -> true;

    final DeviceProviderService devices = new DeviceProviderService() {
        @Override
        public void deviceConnected(DeviceId id, DeviceDescription d) {
            calls.add("connected " + id);
            reachableWhenConnected.add(isReachable.test(id));
            available.put(id, d);
        }

        @Override
        public void deviceDisconnected(DeviceId id) {
            calls.add("disconnected " + id);
            available.remove(id);
        }

        @Override
        public void updatePorts(DeviceId id, List<PortDescription> p) {
            ports.put(id, List.copyOf(p));
        }

        @Override
        public void portStatusChanged(DeviceId id, PortDescription p) {
        }

        @Override
        public void receivedRoleReply(DeviceId id, MastershipRole requested, MastershipRole response) {
        }

        @Override
        public void updatePortStatistics(DeviceId id, Collection<PortStatistics> stats) {
        }

        @Override
        public DeviceProvider provider() {
            return null;
        }
    };

    final LinkProviderService linkService = new LinkProviderService() {
        @Override
        public void linkDetected(LinkDescription d) {
            links.add(d);
        }

        @Override
        public void linkVanished(LinkDescription d) {
            links.remove(d);
        }

        @Override
        public void linksVanished(ConnectPoint cp) {
            links.removeIf(l -> l.src().equals(cp) || l.dst().equals(cp));
        }

        @Override
        public void linksVanished(DeviceId id) {
            links.removeIf(l -> l.src().deviceId().equals(id) || l.dst().deviceId().equals(id));
        }

        @Override
        public LinkProvider provider() {
            return null;
        }
    };
}
