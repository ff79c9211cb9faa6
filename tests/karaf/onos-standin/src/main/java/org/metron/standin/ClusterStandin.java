package org.metron.standin;

import com.google.common.collect.ImmutableSet;
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
import org.osgi.service.component.annotations.Component;

import java.time.Instant;
import java.util.Set;

/** A one-node cluster (core-dist's ClusterManager stand-in): this instance, ACTIVE, ONOS 2.7.0. */
@Component(immediate = true, service = ClusterService.class)
public class ClusterStandin extends AbstractListenerManager<ClusterEvent, ClusterEventListener>
        implements ClusterService {
    static final NodeId LOCAL = NodeId.nodeId("127.0.0.1");
    static final Version VERSION = Version.version("2.7.0");
    private final ControllerNode local = new DefaultControllerNode(LOCAL, IpAddress.valueOf("127.0.0.1"));
    private final Instant started = Instant.now();

    @Override
    public ControllerNode getLocalNode() {
        return local;
    }

    @Override
    public Set<ControllerNode> getNodes() {
        return ImmutableSet.of(local);
    }

    @Override
    public Set<Node> getConsensusNodes() {
        return ImmutableSet.of(local);
    }

    @Override
    public ControllerNode getNode(NodeId nodeId) {
        return LOCAL.equals(nodeId) ? local : null;
    }

    @Override
    public ControllerNode.State getState(NodeId nodeId) {
        return LOCAL.equals(nodeId) ? ControllerNode.State.READY : null;
    }

    @Override
    public Version getVersion(NodeId nodeId) {
        return LOCAL.equals(nodeId) ? VERSION : null;
    }

    @Override
    public Instant getLastUpdatedInstant(NodeId nodeId) {
        return started;
    }
}
