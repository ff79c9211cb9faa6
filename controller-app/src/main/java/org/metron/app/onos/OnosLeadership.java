package org.metron.app.onos;

import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;
import org.onosproject.cluster.ClusterService;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

/** One ONOS leadership topic per chain: the elected instance deploys, updates and removes it. */
@Component(immediate = true, service = Leadership.class)
public class OnosLeadership implements Leadership {
    static final String TOPIC_PREFIX = "metron-chain:";

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LeadershipService leadershipService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ClusterService clusterService;

    @Override
    public boolean actsFor(ChainId chain) {
        NodeId me = clusterService.getLocalNode().id();
        org.onosproject.cluster.Leadership l = leadershipService.runForLeadership(TOPIC_PREFIX + chain.name());
        return l != null && l.leaderNodeId() != null && l.leaderNodeId().equals(me);
    }

    @Override
    public void release(ChainId chain) {
        leadershipService.withdraw(TOPIC_PREFIX + chain.name());
    }
}
