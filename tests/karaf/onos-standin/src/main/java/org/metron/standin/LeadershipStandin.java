package org.metron.standin;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipAdminService;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.metron.standin.cluster.AtomixElections;
import org.metron.standin.cluster.AtomixNode;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * LeadershipService (core-dist's DistributedLeadershipStore + core-net's LeadershipManager, stand-in). One node: the
 * first run for a topic makes this node its leader, for good. In a cluster ({@link AtomixNode} started): one Atomix
 * LeaderElector "onos-leadership" for every topic, LeadershipEvents on every node when a topic's leader or
 * candidates change, a dead node's candidacies withdrawn by Atomix when its Raft session expires; while this node's
 * own sessions are suspended, SERVICE_DISRUPTED for the topics it led, and once connected again SERVICE_RESTORED for
 * every topic, read afresh (DistributedLeadershipStore's status handler; {@link AtomixElections}).
 */
@Component(immediate = true, service = {LeadershipService.class, LeadershipAdminService.class})
public class LeadershipStandin extends AbstractListenerManager<LeadershipEvent, LeadershipEventListener>
        implements LeadershipService, LeadershipAdminService {
    private final Map<String, Leadership> topics = new ConcurrentHashMap<>();
    /**
     * One node's terms, counted from 1 as ONOS's are (DefaultLeaderElectorService's termCounters, kept in Atomix with
     * the rest of the cluster store). This node's store lives in memory ({@code StorageStandin}), and so do its terms:
     * both start afresh with the node, as ONOS's do with a fresh store; Metron's owner tokens carry the store's epoch
     * (ClusterEpoch), so the agents, which keep the newest token they saw, take the fresh terms.
     */
    private final AtomicLong terms = new AtomicLong();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    private volatile AtomixElections elections;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(LeadershipEvent.class, listenerRegistry);
        if (atomixNode.atomix() != null) {
            elections = new AtomixElections(atomixNode, "onos-leadership", ClusterStandin.LOCAL,
                                            new AtomixElections.Listener() {
                @Override
                public void changed(String topic, Leadership old, Leadership now) {
                    LeadershipStandin.this.changed(topic, old, now);
                }

                @Override
                public void restored(String topic, Leadership old, Leadership now) {
                    post(new LeadershipEvent(LeadershipEvent.Type.SERVICE_RESTORED,
                                             now != null ? now : new Leadership(topic, null, ImmutableList.of())));
                }

                @Override
                public void disrupted(String topic, Leadership l) {
                    post(new LeadershipEvent(LeadershipEvent.Type.SERVICE_DISRUPTED,
                                             l != null ? l : new Leadership(topic, null, ImmutableList.of())));
                }
            });
        }
    }

    @Deactivate
    protected void deactivate() {
        if (elections != null) {
            elections.close();
        }
        dispatcher.removeSink(LeadershipEvent.class);
    }

    private void changed(String topic, Leadership old, Leadership now) {
        Leadership l = now != null ? now : new Leadership(topic, null, ImmutableList.of());
        boolean leaderChanged = !java.util.Objects.equals(old == null ? null : old.leaderNodeId(), l.leaderNodeId());
        boolean candidatesChanged = !java.util.Objects.equals(old == null ? ImmutableList.of() : old.candidates(),
                                                              l.candidates());
        post(new LeadershipEvent(leaderChanged && candidatesChanged
                ? LeadershipEvent.Type.LEADER_AND_CANDIDATES_CHANGED
                : leaderChanged ? LeadershipEvent.Type.LEADER_CHANGED : LeadershipEvent.Type.CANDIDATES_CHANGED, l));
    }

    @Override
    public Leadership getLeadership(String topic) {
        return elections != null ? elections.get(topic) : topics.get(topic);
    }

    @Override
    public Set<String> ownedTopics(NodeId nodeId) {
        if (elections != null) {
            return elections.all().entrySet().stream().filter(e -> nodeId.equals(e.getValue().leaderNodeId()))
                    .map(Map.Entry::getKey).collect(ImmutableSet.toImmutableSet());
        }
        return ClusterStandin.LOCAL.equals(nodeId) ? ImmutableSet.copyOf(topics.keySet()) : ImmutableSet.of();
    }

    @Override
    public Leadership runForLeadership(String topic) {
        if (elections != null) {
            return elections.run(topic, ClusterStandin.LOCAL);
        }
        boolean[] elected = {false};
        Leadership l = topics.computeIfAbsent(topic, t -> {
            elected[0] = true;
            return new Leadership(t, new Leader(ClusterStandin.LOCAL, terms.incrementAndGet(),
                                                System.currentTimeMillis()),
                                  ImmutableList.of(ClusterStandin.LOCAL));
        });
        if (elected[0]) {
            post(new LeadershipEvent(LeadershipEvent.Type.LEADER_AND_CANDIDATES_CHANGED, l));
        }
        return l;
    }

    @Override
    public void withdraw(String topic) {
        if (elections != null) {
            elections.withdraw(topic, ClusterStandin.LOCAL);
            return;
        }
        Leadership l = topics.remove(topic);
        if (l != null) {
            post(new LeadershipEvent(LeadershipEvent.Type.LEADER_AND_CANDIDATES_CHANGED,
                                     new Leadership(topic, null, ImmutableList.of())));
        }
    }

    // ------------------------------------------------------------------ LeadershipAdminService (onos:leaders)
    @Override
    public Map<String, Leadership> getLeaderBoard() {
        return elections != null ? elections.all() : Map.copyOf(topics);
    }

    @Override
    public boolean transferLeadership(String topic, NodeId nodeId) {
        return elections != null && elections.anoint(topic, nodeId);
    }

    @Override
    public boolean promoteToTopOfCandidateList(String topic, NodeId nodeId) {
        return elections != null && elections.promote(topic, nodeId);
    }

    @Override
    public void unregister(NodeId nodeId) {
        if (elections != null) {
            elections.evict(nodeId);
        }
    }
}
