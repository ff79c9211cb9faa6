package org.metron.app.onos;

import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.StoreFactory;
import org.metron.app.store.ClusterEpoch;
import org.onosproject.cluster.ClusterService;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.onosproject.store.service.StorageException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * Chain ownership over ONOS's LeadershipService, one topic per chain ({@value #TOPIC_PREFIX}name). Every instance
 * runs for every chain it knows of; the elected leader owns the chain. Whether this instance owns a chain is a read
 * of the leader ONOS already holds ({@code getLeader}); running for a topic (a cluster write) happens once per chain
 * and instance. When a leader's instance stops, ONOS elects the next candidate and posts a LeadershipEvent: the
 * instance that became leader tells its listeners, which pick up what the old owner left unfinished.
 * <p>
 * A candidacy can be lost while this instance runs: Atomix drops every candidacy of a Raft session that expires
 * (measured in the 3-node Karaf test: with the acting node killed on the loaded machine, both survivors' sessions
 * closed, their candidacies went with them and nobody took the chain over), and ONOS's DistributedLeadershipStore
 * runs again on a restored session only for the topics this node leads. So a chain this instance runs for is run
 * for again as soon as an event (or a {@link #join}) shows this instance missing from its candidates.
 * <p>
 * While this node's sessions are suspended the elector tells it no change: a live node whose session expired at
 * load lost a chain to another node without being told (measured in the 3-node test, the drain then ran on the
 * node that no longer owned the chain and was refused). ONOS tells SERVICE_RESTORED for every topic once the
 * elector is connected again, each leadership read afresh; that event is handled as any change (a gain or loss found
 * there is taken as one), and SERVICE_DISRUPTED is not (nothing is known then).
 */
@Component(immediate = true, service = Leadership.class)
public class OnosLeadership implements Leadership {
    static final String TOPIC_PREFIX = "metron-chain:";

    private final Logger log = LoggerFactory.getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LeadershipService leadershipService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ClusterService clusterService;

    /** Where the cluster store's epoch is kept ({@link ClusterEpoch}: the high part of every term given out). */
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected StoreFactory stores;
    private ClusterEpoch epoch;

    /** Topics this instance runs for (until released). */
    private final Set<String> joined = ConcurrentHashMap.newKeySet();
    /** Topics whose candidacy is being run again (one run at a time per topic). */
    private final Set<String> rejoining = ConcurrentHashMap.newKeySet();
    private ExecutorService rejoiner;
    /** Topics this instance leads, as last seen in an event: a gain is reported once per term. */
    private final Set<String> leading = ConcurrentHashMap.newKeySet();
    private final List<Consumer<ChainId>> listeners = new CopyOnWriteArrayList<>();
    private final LeadershipEventListener events = this::leadershipChanged;

    @Activate
    protected void activate() {
        epoch = ClusterEpoch.of(stores, () -> System.currentTimeMillis() / 1000);
        rejoiner = Executors.newSingleThreadExecutor(r -> new Thread(r, "metron-leadership"));
        leadershipService.addListener(events);
    }

    @Deactivate
    protected void deactivate() {
        leadershipService.removeListener(events);
        rejoiner.shutdownNow();
    }

    /**
     * Whether ONOS names this instance the chain's leader. ONOS answers from its cache of the elector; with this
     * node's cluster sessions suspended it asks the elector, which may fail (StorageException): an instance that
     * cannot tell whether it owns the chain does not act for it.
     */
    @Override
    public boolean actsFor(ChainId chain) {
        return local().equals(leader(topic(chain)).map(org.onosproject.cluster.Leadership::leaderNodeId)
                                      .orElse(null));
    }

    /** The topic's leadership as ONOS holds it; empty when none, or when ONOS cannot read it now. */
    private Optional<org.onosproject.cluster.Leadership> leader(String topic) {
        try {
            return Optional.ofNullable(leadershipService.getLeadership(topic));
        } catch (StorageException e) {
            log.debug("Leadership of {} unknown now: {}", topic, e.toString());
            return Optional.empty();
        }
    }

    /**
     * The leader's term as ONOS holds it locally ({@code Leader.term()}), when the leader is this instance, under the
     * cluster store's epoch ({@link ClusterEpoch#token}: a term of a fresh store outranks the old store's at the
     * agents).
     */
    @Override
    public OptionalLong term(ChainId chain) {
        return leader(topic(chain)).filter(l -> l.leader() != null && local().equals(l.leaderNodeId()))
                .map(l -> OptionalLong.of(epoch.token(l.leader().term()))).orElse(OptionalLong.empty());
    }

    /** Runs for the chain unless this instance is among its candidates already (a local read). */
    @Override
    public void join(ChainId chain) {
        String topic = topic(chain);
        joined.add(topic);
        if (!candidate(topic)) {
            run(topic, chain);
        }
    }

    private void run(String topic, ChainId chain) {
        org.onosproject.cluster.Leadership l = leadershipService.runForLeadership(topic);
        if (l != null && local().equals(l.leaderNodeId()) && leading.add(topic)) {
            notifyGained(chain);
        }
    }

    /** Whether this instance is among the topic's candidates; not known (ONOS cannot read it now) counts as no. */
    private boolean candidate(String topic) {
        return leader(topic).map(l -> l.candidates().contains(local())).orElse(false);
    }

    @Override
    public void release(ChainId chain) {
        String topic = topic(chain);
        if (joined.remove(topic)) {
            leading.remove(topic);
            leadershipService.withdraw(topic);
        }
    }

    @Override
    public Optional<String> owner(ChainId chain) {
        return leader(topic(chain)).map(org.onosproject.cluster.Leadership::leaderNodeId).map(NodeId::toString);
    }

    @Override
    public void addListener(Consumer<ChainId> gained) {
        listeners.add(gained);
    }

    @Override
    public void removeListener(Consumer<ChainId> gained) {
        listeners.remove(gained);
    }

    private void leadershipChanged(LeadershipEvent e) {
        String topic = e.subject().topic();
        // SERVICE_DISRUPTED: this node's cluster sessions are suspended, nothing is known until ONOS tells
        // SERVICE_RESTORED, with every leadership read afresh (changes made meanwhile were never told: a leadership
        // this instance lost or gained then is found here)
        if (!topic.startsWith(TOPIC_PREFIX) || e.type() == LeadershipEvent.Type.SERVICE_DISRUPTED) {
            return;
        }
        ChainId chain = ChainId.of(topic.substring(TOPIC_PREFIX.length()));
        // who leads now, not who led when the event was raised: events arrive after the fact, and a withdrawal's
        // event read after this instance ran again would take the chain from it and give it back, telling the
        // listeners of a second gain (LeadershipContract found it: release, join, two gains)
        boolean mine = actsFor(chain);
        if (mine && leading.add(topic)) {
            notifyGained(chain);
        } else if (!mine) {
            leading.remove(topic);
        }
        if (joined.contains(topic) && !e.subject().candidates().contains(local()) && rejoining.add(topic)) {
            rejoiner.execute(() -> {
                rejoining.remove(topic);
                try {
                    if (joined.contains(topic) && !candidate(topic)) {
                        log.warn("Chain {}: this instance's candidacy was lost ({}); running again", chain,
                                 e.type());
                        run(topic, chain);
                    }
                } catch (RuntimeException ex) {
                    log.warn("Chain {}: running again failed: {} (the ownership sweep tries again)", chain,
                             ex.toString());
                }
            });
        }
    }

    private void notifyGained(ChainId chain) {
        for (Consumer<ChainId> l : listeners) {
            try {
                l.accept(chain);
            } catch (RuntimeException e) {
                log.warn("Taking over chain {} failed: {}", chain, e.toString());
            }
        }
    }

    private NodeId local() {
        return clusterService.getLocalNode().id();
    }

    private static String topic(ChainId chain) {
        return TOPIC_PREFIX + chain.name();
    }
}
