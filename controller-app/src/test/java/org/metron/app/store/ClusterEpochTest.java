package org.metron.app.store;

import org.junit.Test;
import org.metron.app.local.LocalStoreFactory;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Owner tokens across cluster stores: the agents keep the newest token per pipeline for their lifetime, so the
 * terms a fresh store's leadership gives out (from 1 again) must outrank every term of the store before it.
 */
public class ClusterEpochTest {

    @Test
    public void theFirstInstanceRecordsTheEpochAndEveryOtherReadsIt() {
        LocalStoreFactory store = new LocalStoreFactory();
        ClusterEpoch first = ClusterEpoch.of(store, () -> 1_700_000_000L);
        ClusterEpoch later = ClusterEpoch.of(store, () -> 1_700_000_500L); // joins (or restarts) later
        assertEquals(1_700_000_000L, first.seconds());
        assertEquals(first.seconds(), later.seconds());
        assertEquals(first.token(7), later.token(7));
    }

    @Test
    public void aFreshStoresFirstTermOutranksEveryTermOfTheStoreBefore() {
        ClusterEpoch old = ClusterEpoch.of(new LocalStoreFactory(), () -> 1_700_000_000L);
        ClusterEpoch fresh = ClusterEpoch.of(new LocalStoreFactory(), () -> 1_700_000_001L);
        assertTrue(fresh.token(1) > old.token((1L << ClusterEpoch.TERM_BITS) - 1));
        assertTrue("terms keep their order within a store", old.token(2) > old.token(1));
        assertTrue("fits a signed long, as Java and the agent's uint64 both read it", fresh.token(1) > 0);
    }

    @Test
    public void aTermBeyondItsBitsIsRefusedRatherThanWrappedIntoTheEpoch() {
        ClusterEpoch e = ClusterEpoch.of(new LocalStoreFactory(), () -> 1_700_000_000L);
        IllegalStateException x = assertThrows(IllegalStateException.class,
                () -> e.token(1L << ClusterEpoch.TERM_BITS));
        assertTrue(x.getMessage(), x.getMessage().contains("does not fit"));
    }
}
