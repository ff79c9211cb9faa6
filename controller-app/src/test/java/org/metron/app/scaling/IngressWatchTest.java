package org.metron.app.scaling;

import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** The ingress rate of a port from successive counter readings, and what counts as a jump. */
public class IngressWatchTest {
    @Test
    public void rateAndJumps() {
        IngressWatch.Rate r = new IngressWatch.Rate();
        assertFalse(r.add(0, 1000));
        assertTrue("one reading is no rate", r.pps().isEmpty());
        assertFalse("the first rate has nothing to jump from", r.add(100, 1040));
        assertEquals(400.0, r.pps().get(), 1e-9);
        assertFalse("steady", r.add(200, 1080));
        assertFalse("+25 %: noise", r.add(300, 1130));
        // 400 -> 1000 pps: 2.3x the smoothed rate and 550 pps more
        assertTrue(r.add(400, 1230));
        assertEquals(1000.0, r.pps().get(), 1e-9);
        assertFalse("the new level is no jump", r.add(500, 1330));
    }

    @Test
    public void smallRatesDoNotJumpOnSinglePackets() {
        IngressWatch.Rate r = new IngressWatch.Rate();
        r.add(0, 0);
        r.add(100, 1);    // 10 pps
        assertFalse("30 pps is 3x but only 20 pps more", r.add(200, 4));
        assertFalse("a counter that went back (switch reset) is no reading", r.add(300, 2));
        assertFalse(r.add(400, 3));
    }
}
