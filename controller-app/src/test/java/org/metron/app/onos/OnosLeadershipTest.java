package org.metron.app.onos;

import com.google.common.collect.ImmutableList;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.onlab.packet.IpAddress;
import org.onosproject.cluster.ClusterServiceAdapter;
import org.onosproject.cluster.ControllerNode;
import org.onosproject.cluster.DefaultControllerNode;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipServiceAdapter;
import org.onosproject.cluster.NodeId;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * {@link OnosLeadership} over a LeadershipService that behaves as ONOS's tells a node: per-chain topics read
 * locally, candidacies lost with a cluster session run for again, and what a suspended session missed found at
 * SERVICE_RESTORED.
 */
public class OnosLeadershipTest {
    /** A LeadershipService over one map of leaderships: runs, withdrawals and reads, each call recorded. */
    private static final class Elections extends LeadershipServiceAdapter {
        final NodeId me;
        final Map<String, org.onosproject.cluster.Leadership> topics = new ConcurrentHashMap<>();
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<LeadershipEventListener> listeners = new CopyOnWriteArrayList<>();

        Elections(NodeId me) {
            this.me = me;
        }

        @Override
        public NodeId getLeader(String topic) {
            org.onosproject.cluster.Leadership l = topics.get(topic);
            return l == null ? null : l.leaderNodeId();
        }

        @Override
        public org.onosproject.cluster.Leadership getLeadership(String topic) {
            return topics.get(topic);
        }

        @Override
        public org.onosproject.cluster.Leadership runForLeadership(String topic) {
            calls.add(topic);
            return topics.compute(topic, (t, l) -> l == null ? new org.onosproject.cluster.Leadership(t,
                    new Leader(me, 1, 0), List.of(me)) : new org.onosproject.cluster.Leadership(t, l.leader(),
                    ImmutableList.<NodeId>builder().addAll(l.candidates()).add(me).build()));
        }

        @Override
        public void withdraw(String topic) {
            calls.add("withdraw " + topic);
        }

        @Override
        public void addListener(LeadershipEventListener listener) {
            listeners.add(listener);
        }

        /** Another node leads topic, with these candidates (as an event from the cluster tells every node). */
        void set(String topic, NodeId leader, NodeId... candidates) {
            tell(LeadershipEvent.Type.LEADER_AND_CANDIDATES_CHANGED, silently(topic, leader, candidates));
        }

        /** The leadership changes and this node is not told (its cluster session expired meanwhile). */
        org.onosproject.cluster.Leadership silently(String topic, NodeId leader, NodeId... candidates) {
            org.onosproject.cluster.Leadership l = new org.onosproject.cluster.Leadership(topic,
                    leader == null ? null : new Leader(leader, 2, 0), List.of(candidates));
            topics.put(topic, l);
            return l;
        }

        void tell(LeadershipEvent.Type type, org.onosproject.cluster.Leadership l) {
            listeners.forEach(x -> x.event(new LeadershipEvent(type, l)));
        }
    }

    private static final NodeId ME = NodeId.nodeId("me");
    private static final NodeId OTHER = NodeId.nodeId("other");

    /** Elections seen by ME in which OTHER alone runs for (and leads) {@code topic}. */
    private static Elections ledByOther(String topic) {
        Elections elections = new Elections(ME);
        elections.set(topic, OTHER, OTHER);
        return elections;
    }

    private static OnosLeadership leadership(Elections elections) {
        OnosLeadership l = new OnosLeadership();
        l.clusterService = new ClusterServiceAdapter() {
            @Override
            public ControllerNode getLocalNode() {
                return new DefaultControllerNode(elections.me, IpAddress.valueOf("127.0.0.1"));
            }
        };
        l.leadershipService = elections;
        l.stores = new org.metron.app.local.LocalStoreFactory();
        l.activate();
        return l;
    }

    @Test
    public void ownershipIsPerChainTopicReadWithoutACallToTheClusterAndJoinedOnce() {
        Elections elections = ledByOther("metron-chain:theirs");
        OnosLeadership l = leadership(elections);
        List<ChainId> gained = new ArrayList<>();
        l.addListener(gained::add);
        try {
            assertFalse(l.actsFor(ChainId.of("mine")));
            assertFalse(l.actsFor(ChainId.of("theirs")));
            assertEquals("other", l.owner(ChainId.of("theirs")).orElseThrow());
            assertTrue("asking is a read", elections.calls.isEmpty());
            l.join(ChainId.of("mine"));
            l.join(ChainId.of("mine"));
            l.join(ChainId.of("theirs"));
            l.join(ChainId.of("theirs"));
            assertTrue(l.actsFor(ChainId.of("mine")));
            assertEquals(List.of(ChainId.of("mine")), gained);
            l.release(ChainId.of("mine"));
            l.release(ChainId.of("nobody")); // never joined: nothing to withdraw
            assertEquals(List.of("metron-chain:mine", "metron-chain:theirs", "withdraw metron-chain:mine"),
                         elections.calls);
        } finally {
            l.deactivate();
        }
    }

    @Test
    public void aCandidacyLostWithAClusterSessionIsRunForAgainAndTheChainTakenOverWhenItsOwnerIsGone()
            throws Exception {
        NodeId me = ME;
        NodeId other = OTHER;
        Elections elections = ledByOther("metron-chain:c");
        OnosLeadership l = leadership(elections);
        BlockingQueue<ChainId> gained = new LinkedBlockingQueue<>();
        l.addListener(gained::add);
        try {
            l.join(ChainId.of("c"));
            assertEquals(List.of(other, me), elections.getLeadership("metron-chain:c").candidates());
            // as Atomix does when this node's session expires: its candidacy gone, the owner still there
            elections.set("metron-chain:c", other, other);
            long deadline = System.currentTimeMillis() + 5000;
            while (!elections.getLeadership("metron-chain:c").candidates().contains(me)
                    && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            assertEquals("run for again at the event", List.of("metron-chain:c", "metron-chain:c"), elections.calls);
            // the owner dies: the next candidate, this instance, owns the chain and is told so
            elections.set("metron-chain:c", me, me);
            assertEquals(ChainId.of("c"), gained.poll(5, TimeUnit.SECONDS));
            assertTrue(l.actsFor(ChainId.of("c")));
            // released: a later loss is not run for again
            l.release(ChainId.of("c"));
            elections.set("metron-chain:c", other, other);
            Thread.sleep(200);
            assertEquals(3, elections.calls.size()); // two runs and the withdrawal
        } finally {
            l.deactivate();
        }
    }

    /**
     * What ONOS tells a node whose cluster session was suspended (DistributedLeadershipStore): SERVICE_DISRUPTED for
     * what it led, nothing of the changes made meanwhile, then SERVICE_RESTORED for every topic, read afresh. The
     * chain this instance lost meanwhile is found lost there (and run for again), so that when its new owner dies
     * and this instance leads again it is told of the gain. Without the restore it kept the chain as led: the gain
     * was never told and nothing took the chain over (the 3-node test at load 22, and a drain the stale owner ran
     * itself).
     */
    @Test
    public void aLeadershipLostWhileTheSessionWasSuspendedIsFoundAtRestoreAndALaterGainIsTold() throws Exception {
        Elections elections = new Elections(ME);
        OnosLeadership l = leadership(elections);
        BlockingQueue<ChainId> gained = new LinkedBlockingQueue<>();
        l.addListener(gained::add);
        try {
            l.join(ChainId.of("c"));
            assertEquals(ChainId.of("c"), gained.poll(5, TimeUnit.SECONDS));
            elections.tell(LeadershipEvent.Type.SERVICE_DISRUPTED, elections.getLeadership("metron-chain:c"));
            // meanwhile this node's session expired: OTHER leads, this node is no candidate, and nobody said so
            org.onosproject.cluster.Leadership now = elections.silently("metron-chain:c", OTHER, OTHER);
            assertFalse("a read asks ONOS, whose cache is fresh", l.actsFor(ChainId.of("c")));
            elections.tell(LeadershipEvent.Type.SERVICE_RESTORED, now);
            long deadline = System.currentTimeMillis() + 5000;
            while (!elections.getLeadership("metron-chain:c").candidates().contains(ME)
                    && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            assertEquals("run for again at the restore", List.of(OTHER, ME),
                         elections.getLeadership("metron-chain:c").candidates());
            // OTHER dies: this instance leads again and is told so
            elections.set("metron-chain:c", ME, ME);
            assertEquals(ChainId.of("c"), gained.poll(5, TimeUnit.SECONDS));
            assertTrue(l.actsFor(ChainId.of("c")));
        } finally {
            l.deactivate();
        }
    }
}
