package org.metron.standin;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Leadership in a one-node cluster (core-dist's stand-in): the first run for a topic makes this node its leader. */
@Component(immediate = true, service = LeadershipService.class)
public class LeadershipStandin extends AbstractListenerManager<LeadershipEvent, LeadershipEventListener>
        implements LeadershipService {
    private final Map<String, Leadership> topics = new ConcurrentHashMap<>();
    private final AtomicLong terms = new AtomicLong();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(LeadershipEvent.class, listenerRegistry);
    }

    @Deactivate
    protected void deactivate() {
        dispatcher.removeSink(LeadershipEvent.class);
    }

    @Override
    public Leadership getLeadership(String topic) {
        return topics.get(topic);
    }

    @Override
    public Set<String> ownedTopics(NodeId nodeId) {
        return ClusterStandin.LOCAL.equals(nodeId) ? ImmutableSet.copyOf(topics.keySet()) : ImmutableSet.of();
    }

    @Override
    public Leadership runForLeadership(String topic) {
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
        Leadership l = topics.remove(topic);
        if (l != null) {
            post(new LeadershipEvent(LeadershipEvent.Type.LEADER_AND_CANDIDATES_CHANGED,
                                     new Leadership(topic, null, ImmutableList.of())));
        }
    }
}
