package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import org.onosproject.common.DefaultTopology;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.Event;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.DisjointPath;
import org.onosproject.net.ElementId;
import org.onosproject.net.Link;
import org.onosproject.net.Path;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.link.LinkEvent;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.provider.ProviderId;
import org.onosproject.net.topology.ClusterId;
import org.onosproject.net.topology.DefaultGraphDescription;
import org.onosproject.net.topology.LinkWeigher;
import org.onosproject.net.topology.PathService;
import org.onosproject.net.topology.Topology;
import org.onosproject.net.topology.TopologyCluster;
import org.onosproject.net.topology.TopologyEvent;
import org.onosproject.net.topology.TopologyGraph;
import org.onosproject.net.topology.TopologyListener;
import org.onosproject.net.topology.TopologyService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;
import java.util.Set;

/**
 * Topology and paths (core-net's TopologyManager/PathManager and the default topology provider, stand-in): on
 * every device or link event the topology is rebuilt as ONOS's provider does, from the available devices and
 * active links, into onos-core-common's real DefaultTopology, whose path searches answer. Paths between devices
 * only: no host provider runs here, so there are no hosts to route from.
 */
@Component(immediate = true, service = {TopologyService.class, PathService.class})
public class TopologyStandin extends AbstractListenerManager<TopologyEvent, TopologyListener>
        implements TopologyService, PathService {
    private static final ProviderId PID = new ProviderId("standin", "org.metron.standin.topology");
    private volatile DefaultTopology current;
    private final DeviceListener deviceListener = e -> {
        if (e.type() != DeviceEvent.Type.PORT_STATS_UPDATED) {
            rebuild(e);
        }
    };
    private final LinkListener linkListener = this::rebuild;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkService linkService;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(TopologyEvent.class, listenerRegistry);
        rebuild(null);
        deviceService.addListener(deviceListener);
        linkService.addListener(linkListener);
    }

    @Deactivate
    protected void deactivate() {
        deviceService.removeListener(deviceListener);
        linkService.removeListener(linkListener);
        dispatcher.removeSink(TopologyEvent.class);
    }

    private synchronized void rebuild(Event<?, ?> reason) {
        current = new DefaultTopology(PID, new DefaultGraphDescription(System.nanoTime(), System.currentTimeMillis(),
                                                                       deviceService.getAvailableDevices(),
                                                                       linkService.getActiveLinks()));
        if (reason != null) {
            post(new TopologyEvent(TopologyEvent.Type.TOPOLOGY_CHANGED, current, ImmutableList.of(reason)));
        }
    }

    private DefaultTopology topo(Topology t) {
        return t instanceof DefaultTopology ? (DefaultTopology) t : current;
    }

    // ------------------------------------------------------------------ PathService
    @Override
    public Set<Path> getPaths(ElementId src, ElementId dst) {
        return src instanceof DeviceId && dst instanceof DeviceId
                ? current.getPaths((DeviceId) src, (DeviceId) dst) : ImmutableSet.of();
    }

    @Override
    public Set<Path> getPaths(ElementId src, ElementId dst, LinkWeigher weigher) {
        return src instanceof DeviceId && dst instanceof DeviceId
                ? current.getPaths((DeviceId) src, (DeviceId) dst, weigher) : ImmutableSet.of();
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(ElementId src, ElementId dst) {
        return src instanceof DeviceId && dst instanceof DeviceId
                ? current.getDisjointPaths((DeviceId) src, (DeviceId) dst) : ImmutableSet.of();
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(ElementId src, ElementId dst, LinkWeigher weigher) {
        return src instanceof DeviceId && dst instanceof DeviceId
                ? current.getDisjointPaths((DeviceId) src, (DeviceId) dst, weigher) : ImmutableSet.of();
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(ElementId src, ElementId dst, Map<Link, Object> riskProfile) {
        return src instanceof DeviceId && dst instanceof DeviceId
                ? current.getDisjointPaths((DeviceId) src, (DeviceId) dst, riskProfile) : ImmutableSet.of();
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(ElementId src, ElementId dst, LinkWeigher weigher,
                                              Map<Link, Object> riskProfile) {
        return src instanceof DeviceId && dst instanceof DeviceId
                ? current.getDisjointPaths((DeviceId) src, (DeviceId) dst, weigher, riskProfile)
                : ImmutableSet.of();
    }

    // ------------------------------------------------------------------ TopologyService
    @Override
    public Topology currentTopology() {
        return current;
    }

    @Override
    public boolean isLatest(Topology topology) {
        return topology == current;
    }

    @Override
    public TopologyGraph getGraph(Topology topology) {
        return topo(topology).getGraph();
    }

    @Override
    public Set<TopologyCluster> getClusters(Topology topology) {
        return topo(topology).getClusters();
    }

    @Override
    public TopologyCluster getCluster(Topology topology, ClusterId clusterId) {
        return topo(topology).getCluster(clusterId);
    }

    @Override
    public Set<DeviceId> getClusterDevices(Topology topology, TopologyCluster cluster) {
        return topo(topology).getClusterDevices(cluster);
    }

    @Override
    public Set<Link> getClusterLinks(Topology topology, TopologyCluster cluster) {
        return topo(topology).getClusterLinks(cluster);
    }

    @Override
    public Set<Path> getPaths(Topology topology, DeviceId src, DeviceId dst) {
        return topo(topology).getPaths(src, dst);
    }

    @Override
    public Set<Path> getPaths(Topology topology, DeviceId src, DeviceId dst, LinkWeigher weigher) {
        return topo(topology).getPaths(src, dst, weigher);
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(Topology topology, DeviceId src, DeviceId dst) {
        return topo(topology).getDisjointPaths(src, dst);
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(Topology topology, DeviceId src, DeviceId dst, LinkWeigher weigher) {
        return topo(topology).getDisjointPaths(src, dst, weigher);
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(Topology topology, DeviceId src, DeviceId dst,
                                              Map<Link, Object> riskProfile) {
        return topo(topology).getDisjointPaths(src, dst, riskProfile);
    }

    @Override
    public Set<DisjointPath> getDisjointPaths(Topology topology, DeviceId src, DeviceId dst, LinkWeigher weigher,
                                              Map<Link, Object> riskProfile) {
        return topo(topology).getDisjointPaths(src, dst, weigher, riskProfile);
    }

    @Override
    public boolean isInfrastructure(Topology topology, ConnectPoint cp) {
        return topo(topology).isInfrastructure(cp);
    }

    @Override
    public boolean isBroadcastPoint(Topology topology, ConnectPoint cp) {
        return topo(topology).isBroadcastPoint(cp);
    }
}
