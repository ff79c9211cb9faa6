package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.FailoverBackup;
import org.metron.app.testing.Fixtures;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * Failover from precomputed backups (paper: backup configurations): after a chain is deployed, the store holds,
 * per device carrying its switch rules, where the chain goes when that device fails; a failure is then handled by
 * that lookup, with exactly the rules a recomputation would install, and a backup computed for another placement
 * is never used.
 */
public class FailoverBackupTest {
    private static final ChainId ID = ChainId.of("r");
    private static final DeviceId S3 = DeviceId.deviceId(TwoPathWorld.S3);

    private static TwoPathWorld deployed() {
        TwoPathWorld w = new TwoPathWorld();
        assertEquals(ChainState.ACTIVE, w.manager.submit(TwoPathWorld.json("r")).state());
        w.manager.awaitBackups();
        return w;
    }

    private static BackupConfiguration backups(TwoPathWorld w) {
        return w.store.backups().get(ID).get().value();
    }

    /** The switches' tables as entries: device, priority, match and actions. */
    private static Set<String> tables(TwoPathWorld w) {
        return List.of(Fixtures.D1, Fixtures.D2, S3, DeviceId.deviceId(TwoPathWorld.S4)).stream()
                .flatMap(d -> w.switches.rules(d).stream())
                .map(r -> r.deviceId() + " " + r.priority() + " " + r.selector() + " " + r.treatment())
                .collect(Collectors.toSet());
    }

    @Test
    public void theStoreHoldsABackupForTheOffloadSwitchFailing() {
        TwoPathWorld w = deployed();
        assertEquals(Fixtures.D2, w.manager.placement(ID).get().offloadDevice().get());
        FailoverBackup b = backups(w).failover(Fixtures.D2).orElseThrow();
        assertEquals(w.manager.placement(ID).get(), b.basis());
        assertEquals(S3, b.moved().offloadDevice().get());
        assertTrue("no rule of the backup is on the failed switch",
                   b.switchRules().stream().noneMatch(r -> r.rule().deviceId().equals(Fixtures.D2)));
        assertFalse("s1, the ingress device, has no backup: nothing routes around it",
                    backups(w).failover(Fixtures.D1).isPresent());
    }

    @Test
    public void aFailureIsHandledFromTheBackupWithTheRulesARecomputationInstalls() {
        TwoPathWorld fromBackup = deployed();
        TwoPathWorld recomputed = deployed();
        // the second world has its backups dropped: its reroute computes
        recomputed.store.backups().put(ID, backups(recomputed).withFailovers(Map.of()));

        for (TwoPathWorld w : List.of(fromBackup, recomputed)) {
            w.net.down(Fixtures.S2);
            assertEquals(List.of(ID), w.manager.reroute(Fixtures.D2));
            assertEquals(S3, w.manager.placement(ID).get().offloadDevice().get());
            assertEquals(0, w.switches.rules(Fixtures.D2).size());
        }
        String used = fromBackup.manager.chain(ID).get().reason();
        assertTrue(used, used.contains("from the backup precomputed for " + Fixtures.D2));
        String computed = recomputed.manager.chain(ID).get().reason();
        assertTrue(computed, computed.contains("(recomputed,"));
        assertEquals(tables(recomputed), tables(fromBackup));
        assertEquals(recomputed.manager.placement(ID), fromBackup.manager.placement(ID));
        // the moved chain's backups are computed for its new placement: with s2 down, s3 has no alternative
        fromBackup.manager.awaitBackups();
        assertTrue(backups(fromBackup).failovers().isEmpty());
        // s2 comes back: the next refresh finds it as s3's backup
        fromBackup.net.device(Fixtures.S2, org.metron.app.spi.DeviceRole.OPENFLOW_SWITCH, 1000)
                .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S2, 2, TwoPathWorld.S4, 1);
        fromBackup.manager.refreshBackups(ID);
        fromBackup.manager.awaitBackups();
        FailoverBackup back = backups(fromBackup).failover(S3).orElseThrow();
        assertEquals(fromBackup.manager.placement(ID).get(), back.basis());
        assertEquals(Fixtures.D2, back.moved().offloadDevice().get());
        fromBackup.manager.remove(ID);
        assertEquals(0, fromBackup.switches.total());
    }

    @Test
    public void aBackupComputedForAnotherPlacementIsNotUsed() {
        TwoPathWorld w = deployed();
        FailoverBackup b = backups(w).failover(Fixtures.D2).orElseThrow();
        // as if the chain had been rescaled since: the stored backup's basis is not the current placement
        FailoverBackup stale = new FailoverBackup(Fixtures.D2, b.moved(), b.moved(), b.switchRules());
        w.store.backups().put(ID, backups(w).withFailovers(Map.of(Fixtures.D2, stale)));
        w.net.down(Fixtures.S2);
        w.manager.reroute(Fixtures.D2);
        assertTrue(w.manager.chain(ID).get().reason().contains("(recomputed,"));
        assertEquals(S3, w.manager.placement(ID).get().offloadDevice().get());
    }
}
