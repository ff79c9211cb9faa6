package org.metron.embedded.contract;

import org.metron.app.onos.OnosLeadership;
import org.metron.app.spi.Leadership;
import org.metron.standin.ClusterStandin;
import org.metron.standin.EventDispatcher;
import org.metron.standin.LeadershipStandin;
import org.metron.standin.cluster.AtomixNode;

import java.util.ArrayList;
import java.util.List;

import static org.metron.embedded.contract.OnosStoreContractTest.set;

/**
 * ONOS's implementation, {@link OnosLeadership}, over ONOS's LeadershipService and ClusterService on one node.
 * ONOS's own (onos-core-dist) are not on Maven Central: tests/karaf/onos-standin's stand-ins, which the Karaf
 * tests run ONOS apps on, with its event dispatcher delivering events on a thread of its own as ONOS's does.
 */
public class OnosLeadershipContractTest extends LeadershipContract {
    private List<Object> started;

    @Override
    protected Leadership leadership() {
        started = new ArrayList<>();
        AtomixNode noCluster = new AtomixNode();
        EventDispatcher events = new EventDispatcher();
        ClusterStandin cluster = new ClusterStandin();
        set(cluster, "dispatcher", events);
        set(cluster, "atomixNode", noCluster);
        LeadershipStandin leaders = new LeadershipStandin();
        set(leaders, "dispatcher", events);
        set(leaders, "atomixNode", noCluster);
        OnosLeadership l = new OnosLeadership();
        set(l, "leadershipService", leaders);
        set(l, "clusterService", cluster);
        for (Object c : List.of(cluster, leaders, l)) {
            call(c, "activate");
            started.add(0, c);
        }
        started.add(events);
        return l;
    }

    @Override
    protected void stop() {
        started.forEach(c -> call(c, "deactivate"));
    }

    /** An SCR lifecycle method (protected, as ONOS writes them). */
    private static void call(Object component, String method) {
        try {
            java.lang.reflect.Method m = component.getClass().getDeclaredMethod(method);
            m.setAccessible(true);
            m.invoke(component);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(method + " of " + component.getClass().getName(), e);
        }
    }
}
