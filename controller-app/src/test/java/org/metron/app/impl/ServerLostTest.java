package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/**
 * A server that is gone for good (its ONOS device unavailable past the failover deadline): its chains run again on
 * another server with switch rules toward it, or end FAILED naming the lost server when none can take them.
 */
public class ServerLostTest {

    @Test
    public void theChainMovesToTheOtherServerWithItsSwitchRules() {
        World w = new World(2, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        Placement before = w.manager.placement(id).get();
        DeviceId lost = before.server().get();
        int lostIndex = lost.toString().equals(Fixtures.serverId(0)) ? 0 : 1;
        w.servers.remove(lost);

        assertEquals(List.of(id), w.manager.serverLost(lost));

        Placement after = w.manager.placement(id).get();
        assertNotEquals(lost, after.server().get());
        assertEquals(ChainState.ACTIVE, w.manager.chain(id).get().state());
        assertTrue(w.manager.chain(id).get().reason().startsWith("moved off " + lost + " (unavailable) to "
                + after.server().get()));
        assertTrue("the other agent runs the pipeline", w.agents.get(1 - lostIndex).pipelines().containsKey("web"));
        // the switch rules now lead to the other server's NIC, and only those of the new placement are installed
        assertEquals(w.manager.rules(null).size(), w.switches.total());
        assertTrue(w.manager.tags().stream().allMatch(t -> t.server().equals(after.server().get())));
        w.manager.remove(id);
        assertEquals(0, w.switches.total());
    }

    @Test
    public void withNoOtherServerTheChainIsDegradedAndPlacedForItsAgentsReturn() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId lost = w.manager.placement(id).get().server().get();
        int rules = w.switches.total();
        w.agents.get(0).unreachable(true);

        assertTrue(w.manager.serverLost(lost).isEmpty());

        Chain c = w.manager.chain(id).get();
        assertEquals("its traffic does not flow: not ACTIVE", ChainState.DEGRADED, c.state());
        assertTrue(c.reason(), c.reason().startsWith("server " + lost + " became unavailable; no other server can "
                + "take the chain ("));
        // what does not run, structured: the pipeline and the NIC rules on the lost server
        assertEquals(List.of("pipeline web", "NIC rules"), c.pending().stream()
                .map(p -> p.what().replaceAll(" \\[.*", "")).collect(Collectors.toList()));
        assertTrue(c.pending().stream().allMatch(p -> p.device().equals(lost)));
        assertEquals("nothing torn down", rules, w.switches.total());
        assertEquals(lost, w.manager.placement(id).get().server().get());
        assertTrue(w.agents.get(0).pipelines().containsKey("web"));
        // a second loss report (another event, a node taking over) changes nothing
        assertTrue(w.manager.serverLost(lost).isEmpty());
        assertEquals(ChainState.DEGRADED, w.manager.chain(id).get().state());

        // its agent answers again (restarted: it lost the pipeline): restart recovery restores it, ACTIVE again
        w.agents.get(0).restart().unreachable(false);
        java.time.Duration t = java.time.Duration.ofSeconds(2);
        new AgentWatch(w.servers, new ServerRecovery(w.store, w.manager, t), t).check();
        assertTrue(w.agents.get(0).pipelines().containsKey("web"));
        assertEquals(ChainState.ACTIVE, w.manager.chain(id).get().state());
        assertEquals("whole again: no reason left", "", w.manager.chain(id).get().reason());
        assertTrue(w.manager.chain(id).get().pending().isEmpty());
    }

    /** DEGRADED, and a server able to take the chain joins: checking the chain again moves it there. */
    @Test
    public void aDegradedChainMovesWhenAServerCanTakeItAgain() {
        World w = new World(2, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId lost = w.manager.placement(id).get().server().get();
        int l = lost.toString().equals(Fixtures.serverId(0)) ? 0 : 1;
        DeviceId other = DeviceId.deviceId(Fixtures.serverId(1 - l));
        w.servers.remove(other); // the only other server is away too
        w.servers.remove(lost);
        w.agents.get(l).unreachable(true);
        w.manager.serverLost(lost);
        assertEquals(ChainState.DEGRADED, w.manager.chain(id).get().state());

        w.servers.add(Fixtures.server(1 - l, w.agents.get(1 - l)));
        assertEquals("moved off " + lost, w.manager.reconcile(id));
        assertEquals(ChainState.ACTIVE, w.manager.chain(id).get().state());
        assertEquals(other, w.manager.placement(id).get().server().get());
        assertTrue(w.agents.get(1 - l).pipelines().containsKey("web"));
    }
}
