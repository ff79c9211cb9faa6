package org.metron.drivers.agent;

import org.junit.Test;

import java.time.Duration;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

public class BackoffTest {

    @Test
    public void doublesUpToTheCap() {
        Backoff b = new Backoff(Duration.ofMillis(10), Duration.ofMillis(75));
        assertEquals(10, b.delayMs(0));
        assertEquals(20, b.delayMs(1));
        assertEquals(40, b.delayMs(2));
        assertEquals(75, b.delayMs(3));
        assertEquals(75, b.delayMs(1000));
    }

    @Test
    public void rejectsInvertedBounds() {
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)));
    }
}
