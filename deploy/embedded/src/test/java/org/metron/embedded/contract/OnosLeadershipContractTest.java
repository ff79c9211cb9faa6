package org.metron.embedded.contract;

import org.metron.app.onos.OnosLeadership;
import org.metron.app.spi.Leadership;
import org.metron.standin.LeadershipStandin;

import static org.metron.embedded.contract.StandinNode.set;

/**
 * ONOS's implementation, {@link OnosLeadership}, over ONOS's LeadershipService and ClusterService on one node.
 * ONOS's own (onos-core-dist) are not on Maven Central: tests/karaf/onos-standin's stand-ins ({@link StandinNode}),
 * which the Karaf tests run ONOS apps on, with its event dispatcher delivering events on a thread of its own as
 * ONOS's does.
 */
public class OnosLeadershipContractTest extends LeadershipContract {
    private StandinNode node;

    @Override
    protected Leadership leadership() {
        node = new StandinNode();
        LeadershipStandin leaders = new LeadershipStandin();
        set(leaders, "dispatcher", node.events);
        set(leaders, "atomixNode", node.noCluster);
        node.start(leaders);
        OnosLeadership l = new OnosLeadership();
        set(l, "leadershipService", leaders);
        set(l, "clusterService", node.cluster);
        set(l, "stores", new org.metron.app.local.LocalStoreFactory());
        return node.start(l);
    }

    @Override
    protected void stop() {
        node.stop();
    }
}
