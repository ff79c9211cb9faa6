package org.metron.standin.cluster;

import com.google.common.collect.ImmutableMap;
import io.atomix.core.election.LeaderElector;
import io.atomix.core.election.LeadershipEventListener;
import io.atomix.primitive.PrimitiveState;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.NodeId;
import org.onosproject.store.service.StorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Elections on one Atomix LeaderElector (candidates are ONOS node ids), seen as ONOS Leaderships: what core-dist's
 * DistributedLeadershipStore keeps in ONOS over core-primitives' elector with relaxed read consistency (Atomix's
 * CachingAsyncLeaderElector). Every node gets every change through the elector's listener and keeps it in a local
 * view, so a leadership read is local, as ONOS's cached reads are; a node whose Raft session expires (dead,
 * partitioned, or a live node whose keep-alives came late on a loaded machine) is removed from every candidate list
 * by Atomix, which elects the next candidate.
 * <p>
 * While this node's sessions are suspended or expired the elector tells it nothing, so what it kept may be stale
 * (measured in the 3-node test at load 22: a live node's session expired, its leadership of a chain went to another
 * node and this node's view kept it as the leader for minutes). ONOS's behaviour, followed here: the cache is
 * dropped when the elector's state turns SUSPENDED or CLOSED (CachingAsyncLeaderElector's status listener), so a read
 * meanwhile asks the elector (a Raft read that waits or fails with a StorageException, as ONOS's does); leaderships
 * this node led are told as disrupted; and when the elector is CONNECTED again, DistributedLeadershipStore's status
 * handler runs again for the topics this node led and tells every leadership as restored, read afresh. The whole
 * board ({@link #all}) is always read from the elector, as ONOS's getLeaderships is.
 */
public final class AtomixElections {
    /** What the store tells its service: changes as they come, and the elector's status changes. */
    public interface Listener {
        /** A topic's leadership changed, on Atomix's event thread. */
        void changed(String topic, Leadership oldLeadership, Leadership newLeadership);

        /**
         * The elector is connected again: {@code now} read afresh, {@code old} what this node had kept (null when
         * nothing). ONOS's DistributedLeadershipStore posts SERVICE_RESTORED; by default a change is told as one.
         */
        default void restored(String topic, Leadership oldLeadership, Leadership newLeadership) {
            if (!Objects.equals(oldLeadership, newLeadership)) {
                changed(topic, oldLeadership, newLeadership);
            }
        }

        /** The elector's sessions are suspended: a leadership this node held may be lost (SERVICE_DISRUPTED). */
        default void disrupted(String topic, Leadership leadership) {
        }
    }

    private static final Logger log = LoggerFactory.getLogger(AtomixElections.class);
    /** How soon a restore whose reads failed is tried again. */
    private static final long RESTORE_RETRY_MS = 1000;
    private final LeaderElector<String> elector;
    private final NodeId local;
    private final Map<String, Leadership> view = new ConcurrentHashMap<>();
    /** Topics the elector answered nobody runs for, while connected (an event for one takes it out). */
    private final Set<String> absent = ConcurrentHashMap.newKeySet();
    /** The topics this node led when last told (DistributedLeadershipStore's localLeaderCache). */
    private final Set<String> led = ConcurrentHashMap.newKeySet();
    private final LeadershipEventListener<String> atomixListener;
    private final Consumer<PrimitiveState> stateListener;
    private final Listener listener;
    /** DistributedLeadershipStore's status-change handler: never an Atomix thread (it reads the elector). */
    private final ScheduledExecutorService statusChanges = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "standin-elections-status");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean suspended;

    public AtomixElections(AtomixNode node, String name, NodeId local, Listener listener) {
        this.elector = node.elector(name);
        this.local = Objects.requireNonNull(local);
        this.listener = listener;
        this.atomixListener = e -> {
            absent.remove(e.topic());
            Leadership now = onos(e.topic(), e.newLeadership());
            Leadership old = now == null ? view.remove(e.topic()) : view.put(e.topic(), now);
            if (old == null) {
                old = onos(e.topic(), e.oldLeadership());
            }
            keep(e.topic(), now);
            if (!Objects.equals(old, now)) {
                Leadership was = old;
                tell(e.topic(), () -> listener.changed(e.topic(), was, now));
            }
        };
        this.stateListener = state -> statusChanges.execute(() -> stateChanged(state));
        elector.addListener(atomixListener);
        elector.addStateChangeListener(stateListener);
        elector.getLeaderships().forEach((topic, l) -> {
            Leadership v = onos(topic, l);
            if (v != null) {
                view.put(topic, v);
                keep(topic, v);
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
     * Tells the listener one change. What the listener throws is logged here and goes no further: thrown into the
     * caller of {@link #run} it would fail a run that succeeded, thrown from {@link #restore} it would count as a
     * failed read and restore again every second (measured: a MastershipInfo the stand-in could not build did both).
     */
    private void tell(String topic, Runnable told) {
        try {
            told.run();
        } catch (RuntimeException e) {
            log.warn("{}: telling the change of {} failed", local, topic, e);
        }
    }

    private void keep(String topic, Leadership l) {
        if (l != null && local.equals(l.leaderNodeId())) {
            led.add(topic);
        } else {
            led.remove(topic);
        }
    }

    private void stateChanged(PrimitiveState state) {
        if (state == PrimitiveState.SUSPENDED || state == PrimitiveState.CLOSED) {
            if (!suspended) {
                suspended = true;
                Map<String, Leadership> kept = new HashMap<>(view);
                view.clear(); // reads ask the elector until it is connected again
                absent.clear();
                log.warn("{}: the elector's sessions are {}: leaderships are read from the elector until it is "
                         + "connected again", local, state);
                led.forEach(topic -> tell(topic, () -> listener.disrupted(topic, kept.get(topic))));
            }
        } else if (state == PrimitiveState.CONNECTED && suspended) {
            suspended = false;
            restore();
        }
    }

    /** Connected again: run again for what this node led, then every leadership read afresh and told as restored. */
    private void restore() {
        Map<String, Leadership> kept = new HashMap<>(view);
        try {
            for (String topic : Set.copyOf(led)) {
                elector.run(topic, local.id());
            }
            Map<String, Leadership> now = new HashMap<>();
            elector.getLeaderships().forEach((topic, l) -> {
                Leadership v = onos(topic, l);
                if (v != null) {
                    now.put(topic, v);
                }
            });
            view.keySet().retainAll(now.keySet());
            view.putAll(now);
            absent.clear();
            now.values().forEach(l -> keep(l.topic(), l));
            log.info("{}: the elector is connected again: {} leaderships read afresh", local, now.size());
            now.forEach((topic, l) -> tell(topic, () -> listener.restored(topic, kept.get(topic), l)));
            kept.keySet().stream().filter(t -> !now.containsKey(t))
                    .forEach(topic -> tell(topic, () -> listener.restored(topic, kept.get(topic), null)));
        } catch (RuntimeException e) {
            // the elector said CONNECTED and will not say it again: tried again here until a read succeeds (a
            // SUSPENDED meanwhile changes nothing: the view is dropped already)
            log.warn("{}: reading the leaderships again failed: {}; trying again in {} ms", local, e.toString(),
                     RESTORE_RETRY_MS);
            suspended = true;
            statusChanges.schedule(() -> {
                if (suspended) {
                    suspended = false;
                    restore();
                }
            }, RESTORE_RETRY_MS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Runs for topic (idempotent); the leadership after the run. A change is told to the listener here, as ONOS's
     * store tells its own node (the elector's event that follows finds the view current and tells nothing more).
     */
    public Leadership run(String topic, NodeId node) {
        Leadership l = onos(topic, elector.run(topic, node.id()));
        if (l != null) {
            Leadership old = view.put(topic, l);
            keep(topic, l);
            if (!Objects.equals(old, l)) {
                tell(topic, () -> listener.changed(topic, old, l));
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

    /**
     * The leadership of topic: the local view, kept current by the elector's events; while nothing is kept for it
     * (never told, or dropped with a suspended session) a read of the elector, kept once answered. A read that fails
     * throws a StorageException, as ONOS's store does.
     */
    public Leadership get(String topic) {
        Leadership l = view.get(topic);
        if (l != null || absent.contains(topic)) {
            return l;
        }
        try {
            l = onos(topic, elector.getLeadership(topic));
        } catch (RuntimeException e) {
            throw new StorageException(e);
        }
        if (!suspended) {
            if (l != null) {
                view.putIfAbsent(topic, l);
            } else {
                absent.add(topic);
            }
        }
        return l;
    }

    /** Every leadership, read from the elector (ONOS's getLeaderships is not cached). */
    public Map<String, Leadership> all() {
        try {
            ImmutableMap.Builder<String, Leadership> b = ImmutableMap.builder();
            elector.getLeaderships().forEach((topic, l) -> {
                Leadership v = onos(topic, l);
                if (v != null) {
                    b.put(topic, v);
                }
            });
            return b.build();
        } catch (RuntimeException e) {
            throw new StorageException(e);
        }
    }

    public void close() {
        elector.removeStateChangeListener(stateListener);
        elector.removeListener(atomixListener);
        statusChanges.shutdownNow();
        elector.close();
    }
}
