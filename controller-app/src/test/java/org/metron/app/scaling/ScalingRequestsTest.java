package org.metron.app.scaling;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.DrainReport;
import org.metron.app.api.MetronException;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestLeadership;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Operator scaling requests follow chain ownership: two scaling managers over one world and one store, instance
 * "a" owning the chain ({@link TestLeadership}); what "b" is asked, "a" runs, and "b" answers as "a" did.
 */
public class ScalingRequestsTest {
    private static final ChainId WEB = ChainId.of("web");
    private final TestLeadership cluster = new TestLeadership();
    private final LocalStoreFactory factory = new LocalStoreFactory();
    private final List<ScalingRequest> seen = new CopyOnWriteArrayList<>();
    private World w;
    private ScalingStore store;
    private ScalingManager a;
    private ScalingManager b;

    @Before
    public void setUp() {
        // the chain is submitted by a chain manager outside the cluster (a, b) that then owns it: its term (0) is
        // outranked by every term of the cluster's, as a chain left by an earlier store's owner is (ChainTerms)
        // two servers: a move has somewhere to go
        w = new World(2, (spec, profile) -> ScalingChains.compiled(spec.name(), profile), 1,
                new org.metron.app.local.SingleInstanceLeadership(0));
        w.manager.submit(Fixtures.chainJson("web"));
        cluster.instance("a").join(WEB);
        cluster.instance("b").join(WEB);
        store = new ScalingStore(factory);
        store.requests().addListener(id -> store.requests().get(id).ifPresent(v -> seen.add(v.value())));
        a = manager("a");
        b = manager("b");
    }

    @After
    public void tearDown() {
        a.close();
        b.close();
    }

    private ScalingManager manager(String name) {
        return new ScalingManager(w.store, factory, w.servers, w.switches, w.manager, w.manager, Fixtures.APP,
                Duration.ofSeconds(2), ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS,
                cluster.instance(name), System::currentTimeMillis, Optional.empty(), IngressWatch.INTERVAL_MS);
    }

    private int groups() {
        return w.manager.placement(WEB).orElseThrow().groups().size();
    }

    @Test
    public void aNonOwnersSplitRunsOnTheOwnerAndIsAnsweredAsItEnded() {
        a.requests().start();
        b.requests().start();
        int before = groups();
        long t0 = System.nanoTime();
        ScalingEvent e = b.split(WEB, "g0");
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(e.toString(), ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals(before + 1, groups());
        assertEquals(List.of(e), store.history(WEB));
        // recorded by b, taken and answered through the map (so run by the owner's requests, not by b), then removed
        assertTrue(seen.toString(), seen.stream().anyMatch(r -> r.isTaken() && !r.isAnswered()));
        assertTrue(seen.toString(), seen.stream().anyMatch(r -> r.event().equals(Optional.of(e))));
        assertTrue(store.requests().snapshot().isEmpty());
        assertTrue("answered in " + ms + " ms", ms < 5_000);

        ScalingEvent m = b.merge(WEB, "g0", e.groups().get(1));
        assertEquals(m.toString(), ScalingEvent.Outcome.DONE, m.outcome());
        assertEquals(before, groups());
    }

    @Test
    public void aNonOwnersMoveRunsOnTheOwnerAndIsAnsweredWithWhatMovedWhere() {
        // what a drain on an instance that does not own the chain does (ServerDrain: ScalingService#move)
        a.requests().start();
        b.requests().start();
        DeviceId from = w.manager.placement(WEB).orElseThrow().server().orElseThrow();
        DeviceId other = w.servers.servers().stream().map(MetronServer::id).filter(s -> !s.equals(from))
                .findFirst().orElseThrow();
        DrainReport.Move m = b.move(WEB, Optional.of(other), "moved off drained server " + from);
        DeviceId to = w.manager.placement(WEB).orElseThrow().server().orElseThrow();
        assertEquals(other, to);
        Chain now = w.manager.chain(WEB).orElseThrow();
        assertEquals(ChainState.ACTIVE, now.state());
        assertEquals(new DrainReport.Move(WEB, "chain", from, to, now.reason()), m);
        assertTrue(now.reason(), now.reason().startsWith("moved off drained server " + from));
        // asked through the map and answered there by the owner
        assertTrue(seen.toString(), seen.stream().anyMatch(r -> r.kind() == ScalingRequest.Kind.MOVE
                && r.move().equals(Optional.of(m))));
        assertTrue(store.requests().snapshot().isEmpty());

        // the owner's refusal, unchanged: a server that is not registered; the chain stays where it is
        MetronException owner = assertThrows(MetronException.class,
                () -> a.move(WEB, Optional.of(DeviceId.deviceId("metron:nowhere")), "moved"));
        MetronException asked = assertThrows(MetronException.class,
                () -> b.move(WEB, Optional.of(DeviceId.deviceId("metron:nowhere")), "moved"));
        assertEquals(owner.fault(), asked.fault());
        assertEquals(owner.getMessage(), asked.getMessage());
        assertEquals(to, w.manager.placement(WEB).orElseThrow().server().orElseThrow());
    }

    @Test
    public void theOwnersRefusalReachesTheOperatorUnchanged() {
        a.requests().start();
        MetronException owner = assertThrows(MetronException.class, () -> a.split(WEB, "nope"));
        MetronException asked = assertThrows(MetronException.class, () -> b.split(WEB, "nope"));
        assertEquals(owner.fault(), asked.fault());
        assertEquals(owner.getMessage(), asked.getMessage());
        assertTrue(store.requests().snapshot().isEmpty());
    }

    @Test
    public void theOwnerRunsWhatItIsAskedOnlyOnce() {
        // b serves too: it never takes a request for a chain it does not own
        a.requests().start();
        b.requests().start();
        int before = groups();
        b.split(WEB, "g0");
        assertEquals(before + 1, groups());
        assertEquals(1, store.history(WEB).size());
        assertEquals(1, seen.stream().filter(r -> r.isTaken() && !r.isAnswered()).count());
    }

    @Test
    public void aRequestWaitingWhenItsOwnerStopsIsRunByTheNextOwner() throws Exception {
        // a never serves (it stops before): b's request waits until b owns the chain
        b.start();
        CompletableFuture<ScalingEvent> asked = CompletableFuture.supplyAsync(() -> b.split(WEB, "g0"));
        long deadline = System.currentTimeMillis() + 5_000;
        while (store.requests().snapshot().isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(10);
        }
        assertFalse("recorded for the owner", store.requests().snapshot().isEmpty());
        assertFalse(asked.isDone());
        cluster.stop("a");
        ScalingEvent e = asked.get(10, TimeUnit.SECONDS);
        assertEquals(e.toString(), ScalingEvent.Outcome.DONE, e.outcome());
        assertTrue(cluster.instance("b").actsFor(WEB));
    }

    @Test
    public void anOwnerThatDoesNotAnswerInTimeLeavesTheRequestPending() {
        Leadership nonOwner = cluster.instance("b");
        try (ScalingRequests asker = new ScalingRequests(store.requests(), nonOwner, r -> {
            throw new AssertionError("a non-owner ran " + r);
        }, Duration.ofMillis(200))) {
            asker.start();
            ScalingRequests.Pending p = assertThrows(ScalingRequests.Pending.class,
                    () -> asker.ask(WEB, ScalingRequest.Kind.SPLIT, "g0", null));
            assertTrue(p.getMessage(), p.getMessage().contains("owner (a)") && p.getMessage().contains("not yet taken"));
            // left for the owner, which runs it when it serves
            assertTrue(store.requests().get(p.request()).isPresent());
            int before = groups();
            a.requests().start();
            long deadline = System.currentTimeMillis() + 5_000;
            while (!store.requests().get(p.request()).map(v -> v.value().isAnswered()).orElse(true)
                    && System.currentTimeMillis() < deadline) {
                Thread.yield();
            }
            assertEquals(before + 1, groups());
        }
    }

    @Test
    public void requestsSurviveTheStoresSerialization() {
        ScalingRequest r = ScalingRequest.ask("id", WEB, ScalingRequest.Kind.MERGE, "g0", "g0.1").taken();
        assertEquals(r, ScalingStore.NAMESPACE.deserialize(ScalingStore.NAMESPACE.serialize(r)));
        ScalingRequest refused = r.refused(new MetronException(MetronException.Fault.INVALID_CHAIN, "no group"));
        ScalingRequest back = ScalingStore.NAMESPACE.deserialize(ScalingStore.NAMESPACE.serialize(refused));
        assertEquals(refused, back);
        assertEquals(MetronException.Fault.INVALID_CHAIN, back.refusal().orElseThrow().fault());
        ScalingRequest moved = ScalingRequest.ask("id", WEB, ScalingRequest.Kind.MOVE, null, "moved off").taken()
                .answered(new DrainReport.Move(WEB, "chain", DeviceId.deviceId("metron:a"),
                        DeviceId.deviceId("metron:b"), "moved off drained server metron:a: ..."));
        assertEquals(moved, ScalingStore.NAMESPACE.deserialize(ScalingStore.NAMESPACE.serialize(moved)));
    }
}
