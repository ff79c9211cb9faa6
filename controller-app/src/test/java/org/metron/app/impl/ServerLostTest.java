package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;

import java.util.List;

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
    public void withNoOtherServerTheChainStaysPlacedForItsAgentsReturn() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId lost = w.manager.placement(id).get().server().get();
        int rules = w.switches.total();
        w.agents.get(0).unreachable(true);

        assertTrue(w.manager.serverLost(lost).isEmpty());

        assertEquals("nothing torn down", ChainState.ACTIVE, w.manager.chain(id).get().state());
        assertTrue(w.manager.chain(id).get().reason(), w.manager.chain(id).get().reason().startsWith(
                "server " + lost + " became unavailable; no other server can take the chain ("));
        assertEquals(rules, w.switches.total());
        assertEquals(lost, w.manager.placement(id).get().server().get());
        assertTrue(w.agents.get(0).pipelines().containsKey("web"));

        // its agent answers again: restart recovery compares it, and the chain no longer reads as waiting
        w.agents.get(0).unreachable(false);
        java.time.Duration t = java.time.Duration.ofSeconds(2);
        new AgentWatch(w.servers, new ServerRecovery(w.store, w.manager, Fixtures.synthesis(), t), t).check();
        assertEquals("its server " + lost + " answers again", w.manager.chain(id).get().reason());
    }
}
