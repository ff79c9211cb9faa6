package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * {@link ServerFailover} as ONOS drives it: device events tell it of a suspected server, and whether the server is
 * still lost is the device's availability when the deadline has passed and the move is readied.
 */
public class ServerFailoverTest {
    private static final ChainId WEB = ChainId.of("web");

    private static DeviceId server(int i) {
        return DeviceId.deviceId(Fixtures.serverId(i));
    }

    /** "web" submitted on two servers: the index of the one it runs on. */
    private static int submit(World w) {
        w.manager.submit(Fixtures.chainJson("web"));
        return w.manager.placement(WEB).get().server().get().equals(server(0)) ? 0 : 1;
    }

    @Test
    public void aServerAvailableAgainWhenItsDeadlinePassesKeepsItsChainAndTheReadiedMoveIsTakenBack()
            throws Exception {
        World w = new World(2, Fixtures.synthesis(), 42);
        int l = submit(w);
        TestAgent spare = w.agents.get(1 - l);
        Set<DeviceId> unavailable = ConcurrentHashMap.newKeySet();
        try (ServerFailover failover = new ServerFailover(w.manager, Duration.ofMillis(300), unavailable::contains)) {
            // unavailable, then available again before its deadline with no event of it reaching the failover (in a
            // cluster the event may come after the deadline): the availability read at the deadline decides
            unavailable.add(server(l));
            failover.suspected(server(l));
            w.manager.awaitFailoverWork(server(l));
            assertTrue("readied on the spare", spare.pipelines().containsKey("web"));
            unavailable.remove(server(l));
            failover.awaitMove(server(l), Duration.ofSeconds(10));
        }
        w.manager.awaitFailoverWork(server(l));
        assertEquals("it stays", server(l), w.manager.placement(WEB).get().server().get());
        assertEquals(ChainState.ACTIVE, w.manager.chain(WEB).get().state());
        assertFalse("the readied pipeline is taken back", spare.pipelines().containsKey("web"));
        assertTrue("nothing left readied", w.manager.readied().isEmpty());
    }

    @Test
    public void aSecondEventOfTheSameOutageDoesNotPutTheMoveOff() throws Exception {
        World w = new World(2, Fixtures.synthesis(), 42);
        int l = submit(w);
        w.agents.get(l).unreachable(true);
        w.servers.remove(server(l));
        try (ServerFailover failover = new ServerFailover(w.manager, Duration.ofMillis(1000), s -> true)) {
            long t0 = System.nanoTime();
            failover.suspected(server(l)); // unavailable
            Thread.sleep(700);
            failover.suspected(server(l)); // then removed: the same outage
            failover.awaitMove(server(l), Duration.ofSeconds(10));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue("moved at the first event's deadline (1000 ms), not the second's (1700): " + ms,
                    ms >= 1000 && ms < 1700);
        }
        assertEquals(server(1 - l), w.manager.placement(WEB).get().server().get());
        assertEquals(ChainState.ACTIVE, w.manager.chain(WEB).get().state());
    }
}
