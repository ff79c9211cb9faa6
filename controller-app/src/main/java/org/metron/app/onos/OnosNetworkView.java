package org.metron.app.onos;

import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.NetworkView;
import org.onlab.graph.ScalarWeight;
import org.onlab.graph.Weight;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Host;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.net.Path;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.pi.service.PiPipeconfService;
import org.onosproject.net.topology.LinkWeigher;
import org.onosproject.net.topology.PathService;
import org.onosproject.net.topology.TopologyEdge;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

/** {@link NetworkView} over ONOS's DeviceService, PathService and HostService. */
@Component(immediate = true, service = NetworkView.class)
public class OnosNetworkView implements NetworkView {
    private final Logger log = LoggerFactory.getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected PathService pathService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected PiPipeconfService pipeconfService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected HostService hostService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkService linkService;

    @Activate
    protected void activate() {
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() {
        log.info("Stopped");
    }

    @Override
    public Collection<NetworkDevice> devices() {
        return StreamSupport.stream(deviceService.getAvailableDevices().spliterator(), false)
                .map(d -> DeviceRoles.of(d, pipeconfService.ofDevice(d.id())))
                .collect(Collectors.toList());
    }

    @Override
    public Optional<NetworkDevice> device(DeviceId id) {
        if (!deviceService.isAvailable(id)) {
            return Optional.empty();
        }
        return Optional.ofNullable(deviceService.getDevice(id))
                .map(d -> DeviceRoles.of(d, pipeconfService.ofDevice(id)));
    }

    @Override
    public Set<Link> egressLinks(ConnectPoint from) {
        return linkService.getEgressLinks(from);
    }

    @Override
    public Optional<List<Link>> path(ConnectPoint from, ConnectPoint to, Set<DeviceId> avoidDevices,
                                     Set<LinkKey> avoidLinks) {
        if (from.deviceId().equals(to.deviceId())) {
            return Optional.of(List.of());
        }
        Set<Path> paths = avoidDevices.isEmpty() && avoidLinks.isEmpty()
                ? pathService.getPaths(from.deviceId(), to.deviceId())
                : pathService.getPaths(from.deviceId(), to.deviceId(), new Avoiding(avoidDevices, avoidLinks));
        // lowest cost first; ties broken by the links' text so every instance picks the same path
        return paths.stream()
                .min(Comparator.<Path>comparingDouble(p -> p.cost()).thenComparing(p -> p.links().toString()))
                .map(Path::links);
    }

    /** Hop count, with the avoided devices' and links' edges not viable. */
    private static final class Avoiding implements LinkWeigher {
        private final Set<DeviceId> devices;
        private final Set<LinkKey> links;

        Avoiding(Set<DeviceId> devices, Set<LinkKey> links) {
            this.devices = devices;
            this.links = links;
        }

        @Override
        public Weight weight(TopologyEdge edge) {
            Link l = edge.link();
            boolean avoided = links.contains(LinkKey.linkKey(l)) || devices.contains(l.src().deviceId())
                    || devices.contains(l.dst().deviceId()) || l.state() == Link.State.INACTIVE;
            return avoided ? ScalarWeight.NON_VIABLE_WEIGHT : new ScalarWeight(1);
        }

        @Override
        public Weight getInitialWeight() {
            return new ScalarWeight(0);
        }

        @Override
        public Weight getNonViableWeight() {
            return ScalarWeight.NON_VIABLE_WEIGHT;
        }
    }

    @Override
    public Set<MacAddress> hostMacs(ConnectPoint at) {
        return hostService.getConnectedHosts(at).stream().map(Host::mac).collect(Collectors.toUnmodifiableSet());
    }
}
