package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.RuleInfo;
import org.metron.app.metrics.ControllerMetrics;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/**
 * The failures issue 21 measured in ONOS 2.7, each as a test against the real ChainManager, ServerRecovery and
 * AgentWatch (agents and switches stood in): a deleted chain came back, a chain stayed ACTIVE while nothing
 * reached its lost server, and the metrics answered 500 when one device had no master. Written against the
 * operations the code had before (so each one fails on b792e96 and passes now).
 */
public class HonestStateRegressionTest {
    private static final Duration T = Duration.ofSeconds(2);

    private static int indexOf(DeviceId server) {
        return server.toString().equals(Fixtures.serverId(0)) ? 0 : 1;
    }

    /**
     * DELETE while the chain's agent is dead; the server's device then goes away (ONOS: unavailable) and its loss
     * is handled; the network reroutes; the agent comes back: the chain is never placed, deployed or restored
     * again, and it disappears once its agent answers and what was left on it is removed.
     */
    @Test
    public void aChainDeletedWhileItsAgentIsDeadIsNeverBroughtBack() {
        World w = new World(2, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId dead = w.manager.placement(id).get().server().get();
        int d = indexOf(dead);
        w.agents.get(d).unreachable(true);

        try {
            w.manager.remove(id);
        } catch (MetronException e) {
            // the code before answered 502 here; the delete must stand either way
        }
        assertEquals("the delete is recorded and stands", ChainState.REMOVING, w.manager.chain(id).get().state());
        assertEquals("the switches' part is removed at once", 0, w.switches.total());

        // the server's device goes unavailable and its loss is handled past the failover deadline
        w.servers.remove(dead);
        assertTrue(w.manager.serverLost(dead).isEmpty());
        w.manager.reroute(Fixtures.D2);
        assertEquals(ChainState.REMOVING, w.manager.chain(id).get().state());
        assertFalse("never placed on the other server", w.agents.get(1 - d).pipelines().containsKey("web"));
        assertEquals("no switch rule installed again", 0, w.switches.total());

        // the agent returns (restarted or not): the restart recovery must not restore it, the removal ends
        w.servers.add(Fixtures.server(d, w.agents.get(d)));
        w.agents.get(d).unreachable(false);
        new AgentWatch(w.servers, new ServerRecovery(w.store, w.manager, T), T).check();

        assertTrue("gone once nothing of it is left", w.manager.chain(id).isEmpty());
        assertFalse(w.agents.get(d).pipelines().containsKey("web"));
        assertTrue(w.agents.get(d).nicRules().isEmpty());
        assertTrue(w.manager.placements().isEmpty());
        assertTrue(w.manager.tags().isEmpty());
        assertEquals(0, w.switches.total());
    }

    /** The chain's server is lost and no other server can take it: its traffic does not flow, so not ACTIVE. */
    @Test
    public void aChainWhoseServerIsLostWithNoOtherServerIsNotActive() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId lost = w.manager.placement(id).get().server().get();
        w.agents.get(0).unreachable(true);

        w.manager.serverLost(lost);

        assertNotEquals("state never lies", ChainState.ACTIVE, w.manager.chain(id).get().state());
        assertNotEquals("and it is not FAILED either: it is kept for its agent's return", ChainState.FAILED,
                w.manager.chain(id).get().state());
    }

    /**
     * A server that dies while a chain is being deployed on it (after its pipeline started, while the switch
     * rules go live): once its loss is handled the chain does not read ACTIVE.
     */
    @Test
    public void aServerDyingMidDeployLeavesTheChainHonest() {
        World w = new World(1, Fixtures.synthesis(), 42);
        ChainId id = ChainId.of("web");
        w.switches.beforeCommit(dev -> w.agents.get(0).unreachable(true));
        try {
            w.manager.submit(Fixtures.chainJson("web"));
        } catch (MetronException e) {
            // the deployment may notice it: then the chain is FAILED and everything rolled back
        }
        DeviceId server = DeviceId.deviceId(Fixtures.serverId(0));
        w.manager.serverLost(server);
        assertNotEquals(ChainState.ACTIVE, w.manager.chain(id).get().state());
    }

    /**
     * One device's flow entries cannot be read (ONOS: "There is no master for available device"): the rules view
     * and the metrics still answer with the other device's rules and counters. The unreadable device's rules are
     * not listed: what a chain has on a switch is read from the switch layer (the store keeps only their ids), and
     * ONOS cannot tell them now; they come back once it can.
     */
    @Test
    public void rulesAndMetricsAnswerWhenOneDeviceCannotBeRead() {
        World w = new World(1, Fixtures.synthesis(), 42);
        w.manager.submit(Fixtures.chainJson("web"));
        int all = w.manager.rules(null).size();
        int onD1 = w.manager.rules(Fixtures.D1).size();
        assertTrue(onD1 > 0 && onD1 < all);
        w.switches.unreadable(Fixtures.D2, new IllegalStateException("There is no master for available device "
                + Fixtures.S2));

        List<RuleInfo> rules = w.manager.rules(null);

        assertEquals("the readable device's rules listed", onD1, rules.size());
        assertTrue(rules.stream().allMatch(r -> r.rule().deviceId().equals(Fixtures.D1) && r.packets() == 7));
        String metrics = ControllerMetrics.scrape(w.manager, null);
        assertTrue(metrics, metrics.contains("metron_chain_switch_rules{chain=\"web\",device=\"" + Fixtures.S1));
        assertTrue(w.manager.rules(Fixtures.D2).isEmpty());

        w.switches.unreadable(Fixtures.D2, null);
        assertEquals("listed again once the device answers", all, w.manager.rules(null).size());
    }
}
