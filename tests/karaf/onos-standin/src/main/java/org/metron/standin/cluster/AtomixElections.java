package org.metron.standin.cluster;

import com.google.common.collect.ImmutableMap;
import io.atomix.core.election.LeaderElector;
import io.atomix.core.election.LeadershipEventListener;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.NodeId;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Elections on one Atomix LeaderElector (candidates are ONOS node ids), seen as ONOS Leaderships: what core-dist's
 * DistributedLeadershipStore keeps in ONOS. Every node gets every change through the elector's listener (kept in a
 * local view, so reads are local as ONOS's are); a node whose Raft session expires (dead, partitioned) is removed
 * from every candidate list by Atomix, which elects the next candidate.
 */
public final class AtomixElections {
    /** Called for every change of a topic's leadership, on Atomix's event thread. */
    public interface Listener {
        void changed(String topic, Leadership oldLeadership, Leadership newLeadership);
    }

    private final LeaderElector<String> elector;
    private final Map<String, Leadership> view = new ConcurrentHashMap<>();
    private final LeadershipEventListener<String> atomixListener;
    private final Listener listener;

    public AtomixElections(AtomixNode node, String name, Listener listener) {
        this.elector = node.elector(name);
        this.listener = listener;
        this.atomixListener = e -> {
            Leadership now = onos(e.topic(), e.newLeadership());
            Leadership old = now == null ? view.remove(e.topic()) : view.put(e.topic(), now);
            if (old == null) {
                old = onos(e.topic(), e.oldLeadership());
            }
            if (!Objects.equals(old, now)) {
                listener.changed(e.topic(), old, now);
            }
        };
        elector.addListener(atomixListener);
        elector.getLeaderships().forEach((topic, l) -> {
            Leadership v = onos(topic, l);
            if (v != null) {
                view.put(topic, v);
            }
        });
    }

    /** ONOS's view of an Atomix leadership; null when nobody runs for the topic. */
    static Leadership onos(String topic, io.atomix.core.election.Leadership<String> l) {
        if (l == null || (l.leader() == null && l.candidates().isEmpty())) {
            return null;
        }
        Leader leader = l.leader() == null ? null
                : new Leader(NodeId.nodeId(l.leader().id()), l.leader().term(), l.leader().timestamp());
        return new Leadership(topic, leader, l.candidates().stream().map(NodeId::nodeId).collect(Collectors.toList()));
    }

    /**
     * Runs for topic (idempotent); the leadership after the run. A change is told to the listener here, as ONOS's
     * store tells its own node (the elector's event that follows finds the view current and tells nothing more).
     */
    public Leadership run(String topic, NodeId node) {
        Leadership l = onos(topic, elector.run(topic, node.id()));
        if (l != null) {
            Leadership old = view.put(topic, l);
            if (!Objects.equals(old, l)) {
                listener.changed(topic, old, l);
            }
        }
        return l;
    }

    public void withdraw(String topic, NodeId node) {
        elector.withdraw(topic, node.id());
    }

    public boolean anoint(String topic, NodeId node) {
        return elector.anoint(topic, node.id());
    }

    public boolean promote(String topic, NodeId node) {
        return elector.promote(topic, node.id());
    }

    /** Removes node from every election (LeadershipAdminService.unregister). */
    public void evict(NodeId node) {
        elector.evict(node.id());
    }

    /** The locally known leadership of topic (kept current by the elector's events). */
    public Leadership get(String topic) {
        return view.get(topic);
    }

    public Map<String, Leadership> all() {
        return ImmutableMap.copyOf(view);
    }

    public void close() {
        elector.removeListener(atomixListener);
        elector.close();
    }
}
