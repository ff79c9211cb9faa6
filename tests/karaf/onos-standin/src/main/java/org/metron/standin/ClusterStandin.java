package org.metron.standin;

import com.google.common.collect.ImmutableSet;
import io.atomix.cluster.ClusterMembershipEvent;
import io.atomix.cluster.ClusterMembershipEventListener;
import io.atomix.cluster.Member;
import org.metron.standin.cluster.AtomixNode;
import org.metron.standin.cluster.ClusterConfig;
import org.onlab.packet.IpAddress;
import org.onosproject.cluster.ClusterEvent;
import org.onosproject.cluster.ClusterEventListener;
import org.onosproject.cluster.ClusterService;
import org.onosproject.cluster.ControllerNode;
import org.onosproject.cluster.DefaultControllerNode;
import org.onosproject.cluster.Node;
import org.onosproject.cluster.NodeId;
import org.onosproject.core.Version;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * ClusterService (core-dist's ClusterManager / AtomixClusterStore stand-in). One node: this instance, ACTIVE, ONOS
 * 2.7.0. In a cluster ({@link ClusterConfig}, {@link AtomixNode}): the configured nodes, READY while Atomix's
 * membership finds their member reachable, INACTIVE otherwise, with ClusterEvents when that changes.
 */
@Component(immediate = true, service = ClusterService.class)
public class ClusterStandin extends AbstractListenerManager<ClusterEvent, ClusterEventListener>
        implements ClusterService {
    static final NodeId LOCAL = NodeId.nodeId(ClusterConfig.clustered() ? ClusterConfig.get().local.id : "127.0.0.1");
    static final Version VERSION = Version.version("2.7.0");
    private final Instant started = Instant.now();
    private final Map<NodeId, ControllerNode> nodes = ClusterConfig.clustered()
            ? ClusterConfig.get().members.stream().collect(Collectors.toMap(
                    m -> NodeId.nodeId(m.id), m -> (ControllerNode) new DefaultControllerNode(
                            NodeId.nodeId(m.id), IpAddress.valueOf(m.ip), m.port), (a, b) -> a,
                    ConcurrentHashMap::new))
            : Map.of(LOCAL, new DefaultControllerNode(LOCAL, IpAddress.valueOf("127.0.0.1")));
    private final Map<NodeId, Instant> updated = new ConcurrentHashMap<>();
    private final ClusterMembershipEventListener membershipListener = this::membershipChanged;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(ClusterEvent.class, listenerRegistry);
        if (atomixNode.atomix() != null) {
            atomixNode.atomix().getMembershipService().addListener(membershipListener);
        }
    }

    @Deactivate
    protected void deactivate() {
        if (atomixNode.atomix() != null) {
            atomixNode.atomix().getMembershipService().removeListener(membershipListener);
        }
        dispatcher.removeSink(ClusterEvent.class);
    }

    private void membershipChanged(ClusterMembershipEvent e) {
        NodeId id = NodeId.nodeId(e.subject().id().id());
        ControllerNode node = nodes.get(id);
        if (node == null) {
            return;
        }
        updated.put(id, Instant.now());
        ControllerNode.State state = getState(id);
        post(new ClusterEvent(state == ControllerNode.State.READY ? ClusterEvent.Type.INSTANCE_READY
                                      : ClusterEvent.Type.INSTANCE_DEACTIVATED, node));
    }

    @Override
    public ControllerNode getLocalNode() {
        return nodes.get(LOCAL);
    }

    @Override
    public Set<ControllerNode> getNodes() {
        return ImmutableSet.copyOf(nodes.values());
    }

    /** The storage members holding the Raft partitions (ONOS's ClusterManager answers the metadata's storage nodes). */
    @Override
    public Set<Node> getConsensusNodes() {
        return ClusterConfig.clustered()
                ? ClusterConfig.get().storage.stream().map(m -> (Node) new DefaultControllerNode(
                        NodeId.nodeId(m.id), IpAddress.valueOf(m.ip), m.port)).collect(ImmutableSet.toImmutableSet())
                : ImmutableSet.copyOf(nodes.values());
    }

    @Override
    public ControllerNode getNode(NodeId nodeId) {
        return nodes.get(nodeId);
    }

    @Override
    public ControllerNode.State getState(NodeId nodeId) {
        if (!nodes.containsKey(nodeId)) {
            return null;
        }
        if (LOCAL.equals(nodeId) || atomixNode == null || atomixNode.atomix() == null) {
            return ControllerNode.State.READY;
        }
        Member m = atomixNode.atomix().getMembershipService().getMember(nodeId.id());
        return m != null && m.isReachable() ? ControllerNode.State.READY : ControllerNode.State.INACTIVE;
    }

    @Override
    public Version getVersion(NodeId nodeId) {
        return nodes.containsKey(nodeId) ? VERSION : null;
    }

    @Override
    public Instant getLastUpdatedInstant(NodeId nodeId) {
        return updated.getOrDefault(nodeId, started);
    }
}
