package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.GroupStatus;
import org.metron.app.api.ChainState;
import org.metron.app.api.DrainReport;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.ServerInfo;
import org.metron.app.rest.ChainsWebResource;
import org.metron.app.testing.Codecs;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.TrafficTreatment;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Server drains (docs/failover.md#planned-restart-drain) on two real metron-agents ({@link ScaleOutFixture}): the
 * real chain manager moves a drained server's chain make-before-break with its NAPT flows, the real scaling
 * executor merges a group scaled out to it back with its flows, placement and scale-out leave it out until it is
 * undrained, and a drain with nowhere to go is refused with the chain untouched.
 */
public class ServerDrainTest extends ScaleOutFixture {
    private static ServerDrain drains(Rig rig) {
        return new ServerDrain(rig.store, rig.servers, rig.manager, (c, keep, retire) -> rig.executor().merge(c, keep,
                retire, "requested by an operator", System.currentTimeMillis()), System::currentTimeMillis);
    }

    private static String only(List<GroupStatus> groups) {
        assertEquals(groups.toString(), 1, groups.size());
        return groups.get(0).getGroupId();
    }

    private static ServerInfo info(Rig rig, org.onosproject.net.DeviceId id) {
        return rig.manager.servers().stream().filter(s -> s.id().equals(id)).findFirst().orElseThrow();
    }

    @Test
    public void aDrainedServersChainMovesOffWithItsFlowsNothingGoesThereAndUndrainWithMoveBackBringsItBack()
            throws Exception {
        Rig rig = new Rig("drain-move");
        ServerDrain drains = drains(rig);
        rig.importFlow(rig.home, "g0", 5000, 2000);
        rig.importFlow(rig.home, "g0", 5001, 2001);

        DrainReport r = drains.drain(rig.home.id());

        assertTrue(r.drained());
        assertEquals(r.moves().toString(), 1, r.moves().size());
        DrainReport.Move m = r.moves().get(0);
        assertEquals("chain", m.what());
        assertEquals(rig.home.id(), m.from());
        assertEquals(rig.away.id(), m.to());
        assertTrue(m.detail(), m.detail().startsWith("moved off drained server " + rig.home.id() + ": from "
                + rig.home.id() + " to " + rig.away.id() + " make-before-break"));
        assertTrue(m.detail(), m.detail().contains("2 flows carried over"));
        Placement p = rig.placement();
        assertEquals(rig.away.id(), p.server().get());
        assertEquals(ChainState.ACTIVE, rig.manager.chain(rig.chain).get().state());
        // nothing of it is left on the drained server; the other runs it with both NAPT mappings as they were
        assertTrue(rig.groups(rig.home).isEmpty());
        String moved = only(rig.groups(rig.away));
        assertEquals(Map.of(5000, 2000, 5001, 2001), rig.flows(rig.away, moved));
        rig.assertStoreTruthful();
        // the one drained record, as the views show it
        assertTrue(rig.store.isDrained(rig.home.id()));
        assertEquals(Set.of(rig.home.id()), drains.drained().keySet());
        assertTrue(info(rig, rig.home.id()).drainedSinceMs().isPresent());
        assertFalse(info(rig, rig.away.id()).drainedSinceMs().isPresent());
        assertTrue(Codecs.json(info(rig, rig.home.id()), ServerInfo.class).get("drained").asBoolean());
        assertEquals("[{\"id\":\"" + rig.away.id() + "\",\"drained\":false}]",
                ChainsWebResource.servers(p, drains.drained().keySet(), Codecs.CONTEXT.mapper()).toString());
        // scaling puts nothing there either: the chain may use one core on its server, so its split would go to
        // the other server, which is drained
        try {
            rig.executor().split(rig.chain, moved, Map.of(0, 500.0, 1, 300.0, 2, 200.0, 3, 10.0), "test",
                    System.currentTimeMillis());
            fail("a scale-out onto a drained server");
        } catch (MetronException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("none reachable and not drained"));
        }
        assertTrue(rig.groups(rig.home).isEmpty());

        DrainReport back = drains.undrain(rig.home.id(), true);

        assertFalse(back.drained());
        assertEquals(back.moves().toString(), 1, back.moves().size());
        assertEquals(rig.away.id(), back.moves().get(0).from());
        assertEquals(rig.home.id(), back.moves().get(0).to());
        assertFalse(rig.store.isDrained(rig.home.id()));
        assertEquals(rig.home.id(), rig.placement().server().get());
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals(Map.of(5000, 2000, 5001, 2001), rig.flows(rig.home, only(rig.groups(rig.home))));
        rig.assertStoreTruthful();
    }

    @Test
    public void aFailoverMoveReadiedForTheChainGivesWayToTheDrain() throws Exception {
        Rig rig = new Rig("drain-readied");
        ServerDrain drains = drains(rig);
        rig.importFlow(rig.home, "g0", 5000, 2000);
        // its agent answered a Health poll late (at rate on two loaded CPUs it does): the chain is readied on the
        // other server, its pipeline there and a core held, until the agent answers again or the deadline passes
        rig.manager.serverSuspected(rig.home.id());
        long end = System.currentTimeMillis() + 10_000;
        while (rig.store.prepared().get(rig.chain).isEmpty() && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        assertTrue("readied on the other server", rig.store.prepared().get(rig.chain).isPresent());

        DrainReport r = drains.drain(rig.home.id());

        // the operator's move supersedes the readied one: taken back, then the chain moved with its flows
        assertEquals(r.moves().toString(), rig.away.id(), r.moves().get(0).to());
        assertFalse(rig.store.prepared().get(rig.chain).isPresent());
        assertTrue(rig.groups(rig.home).isEmpty());
        assertEquals(Map.of(5000, 2000), rig.flows(rig.away, only(rig.groups(rig.away))));
        rig.assertStoreTruthful();
    }

    @Test
    public void aGroupScaledOutToADrainedServerIsMergedBackWithTheFlowsMadeThere() throws Exception {
        Rig rig = new Rig("drain-merge");
        ServerDrain drains = drains(rig);
        rig.spreadWholeClasses();
        rig.importFlow(rig.away, "g0.1", 5002, 3002);

        DrainReport r = drains.drain(rig.away.id());

        assertEquals(r.moves().toString(), 1, r.moves().size());
        assertEquals("group g0.1 (merged into g0)", r.moves().get(0).what());
        assertEquals(rig.away.id(), r.moves().get(0).from());
        assertEquals(rig.home.id(), r.moves().get(0).to());
        assertEquals(List.of("g0"), rig.placement().groups().stream().map(g -> g.groupId())
                .collect(Collectors.toList()));
        assertTrue(rig.groups(rig.away).isEmpty());
        assertEquals(Map.of(5002, 3002), rig.flows(rig.home, "g0"));
        assertTrue(rig.store.isDrained(rig.away.id()));
        // with the other server drained, the chain's own server is the only one left: draining it is refused
        Map<FlowId, TrafficTreatment> rules = rig.allRules();
        try {
            drains.drain(rig.home.id());
            fail("drained with nowhere to go");
        } catch (MetronException e) {
            assertEquals(MetronException.Fault.IMPOSSIBLE_PLACEMENT, e.fault());
            assertTrue(e.getMessage(), e.getMessage().contains("every other server is drained: [" + rig.away.id()
                    + "]"));
        }
        assertFalse(rig.store.isDrained(rig.home.id()));
        assertEquals(rules, rig.allRules());
    }

    @Test
    public void drainingTheOnlyServerIsRefusedNamingTheChainAndLeavesItUntouched() throws Exception {
        Rig rig = new Rig("drain-only", first.client(), null, org.metron.app.testing.Fixtures.S1 + "/3");
        ServerDrain drains = drains(rig);
        rig.importFlow(rig.home, "g0", 5000, 2000);
        Placement before = rig.placement();
        Map<FlowId, TrafficTreatment> rules = rig.allRules();
        long version = rig.manager.chain(rig.chain).get().version();

        try {
            drains.drain(rig.home.id());
            fail("the only server drained");
        } catch (MetronException e) {
            assertEquals(MetronException.Fault.IMPOSSIBLE_PLACEMENT, e.fault());
            assertEquals("server " + rig.home.id() + " not drained: chain(s) [" + rig.chain + "] run on it and no "
                    + "other server could take them (it is the only server registered); nothing was moved and the "
                    + "server takes chains as before", e.getMessage());
        }

        assertFalse(rig.store.isDrained(rig.home.id()));
        assertEquals(before, rig.placement());
        assertEquals(rules, rig.allRules());
        assertEquals(version, rig.manager.chain(rig.chain).get().version());
        assertEquals(ChainState.ACTIVE, rig.manager.chain(rig.chain).get().state());
        assertEquals(Map.of(5000, 2000), rig.flows(rig.home, "g0"));
        // bad input: a server nobody registered, and an undrain of a server not drained
        for (Runnable bad : List.<Runnable>of(() -> drains.drain(org.onosproject.net.DeviceId.deviceId("metron:x")),
                () -> drains.undrain(rig.home.id(), false))) {
            try {
                bad.run();
                fail();
            } catch (MetronException e) {
                assertEquals(e.getMessage(), MetronException.Fault.INVALID_REQUEST, e.fault());
            }
        }
        assertEquals(before, rig.placement());
    }
}
