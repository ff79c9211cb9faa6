package org.metron.standin;

import com.google.common.collect.ImmutableList;
import org.junit.Test;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.NodeId;
import org.onosproject.mastership.MastershipInfo;
import org.onosproject.net.MastershipRole;

import java.util.Optional;

import static org.junit.Assert.assertEquals;

public class MastershipStandinTest {
    private static final NodeId N1 = NodeId.nodeId("onos-1");
    private static final NodeId N2 = NodeId.nodeId("onos-2");
    private static final NodeId N3 = NodeId.nodeId("onos-3");

    /**
     * Atomix lists a node once per Raft session: after its session was recovered, onos-2 is a candidate twice until
     * the old session expires (the cluster test's storage-member kill; the stand-in threw building the roles).
     */
    @Test
    public void aCandidateListedOncePerSessionIsOneStandby() {
        Leadership l = new Leadership("device:of:1", new Leader(N3, 3, 0),
                                      ImmutableList.of(N3, N2, N1, N2));
        MastershipInfo info = MastershipStandin.info(l);
        assertEquals(Optional.of(N3), info.master());
        assertEquals(3, info.term());
        assertEquals(ImmutableList.of(N2, N1), info.backups());
        assertEquals(MastershipRole.MASTER, info.getRole(N3));
    }

    @Test
    public void noLeadershipIsNoMaster() {
        assertEquals(Optional.empty(), MastershipStandin.info(null).master());
    }
}
