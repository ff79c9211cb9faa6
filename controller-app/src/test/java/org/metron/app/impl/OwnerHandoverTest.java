package org.metron.app.impl;

import org.junit.After;
import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestLeadership;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Two controller instances over one store (each with its own chain locks, as two JVMs), one network: an operator's
 * write reaches whichever instance it is sent to; the chain's owner carries it out.
 */
public class OwnerHandoverTest {
    private final World w = new World(1, Fixtures.synthesis(), 5);
    private final LocalStoreFactory shared = new LocalStoreFactory();
    private final TestLeadership cluster = new TestLeadership();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final java.util.Map<String, ChainOwnership> owners = new java.util.HashMap<>();
    private final java.util.Map<String, ChainStore> stores = new java.util.HashMap<>();

    private ChainManager instance(String name) {
        return instance(name, Duration.ofMillis(50));
    }

    /** An instance whose ownership sweeps every {@code sweep} (its map events aside). */
    private ChainManager instance(String name, Duration sweep) {
        ChainStore store = new ChainStore(shared, w.switches);
        ChainManager m = new ChainManager(store, w.servers, w.switches, cluster.instance(name),
                new PlacementEngine(w.servers, w.network, w.switches, new Random(1), Duration.ofSeconds(1)),
                new RulePlanner(Fixtures.APP, w.network), new Deployer(w.switches, Duration.ofSeconds(1)),
                Duration.ofSeconds(1), Fixtures.synthesis());
        ChainOwnership o = new ChainOwnership(store.chains(), cluster.instance(name), m::reconcile,
                System::currentTimeMillis).start(sweep);
        owners.put(name, o);
        stores.put(name, store);
        open.add(o);
        open.add(m::close);
        return m;
    }

    @After
    public void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    @Test
    public void aChainSubmittedToAnInstanceThatDoesNotOwnItIsBroughtUpByItsOwner() {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        cluster.instance("a").join(ChainId.of("web")); // a runs for "web" first: it owns it

        Chain c = b.submit(Fixtures.chainJson("web"));

        assertEquals(ChainState.ACTIVE, c.state());
        assertEquals("a", cluster.instance("b").owner(ChainId.of("web")).orElseThrow());
        assertEquals(1, w.agents.get(0).pipelines().size());
        assertTrue(w.switches.total() > 0);
        assertEquals(c, a.chain(ChainId.of("web")).orElseThrow());
    }

    @Test
    public void badClickIsRefusedByTheInstanceItIsSentToAndNothingIsStored() {
        instance("a");
        ChainManager b = instance("b");
        cluster.instance("a").join(ChainId.of("web"));
        String bad = Fixtures.chainJson("web").replace("IPFilter", "Bogus");

        MetronException e = assertThrows(MetronException.class, () -> b.submit(bad));
        assertEquals(MetronException.Fault.INVALID_CHAIN, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("Bogus"));
        assertTrue(b.chains().isEmpty());
    }

    @Test
    public void aDeleteSentToAnInstanceThatDoesNotOwnTheChainIsCarriedOutByItsOwner() {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        a.submit(Fixtures.chainJson("web"));
        assertTrue(w.switches.total() > 0);

        Optional<Chain> left = b.remove(ChainId.of("web"));

        assertEquals(Optional.empty(), left);
        assertTrue(a.chains().isEmpty());
        assertEquals(0, w.switches.total());
        assertTrue(w.agents.get(0).pipelines().isEmpty());
    }

    /**
     * How long a write sent to an instance that does not own the chain takes to be carried out, the owners
     * sweeping at the production interval: a POST of a chain the other instance owns, a PUT (answered 421 before),
     * a DELETE. The owner follows
     * the map's events, so the figures are the bring-up and removal themselves (with a sweep each second instead,
     * 8d01de4: POST median 1081 ms, DELETE median 1008 ms). Prints the figures.
     */
    @Test
    public void aNonOwnersWriteIsPickedUpSoonWithTheProductionSweep() {
        ChainManager a = instance("a", Duration.ofMillis(ChainOwnership.SWEEP_MS));
        ChainManager b = instance("b", Duration.ofMillis(ChainOwnership.SWEEP_MS));
        List<Long> post = new ArrayList<>();
        List<Long> delete = new ArrayList<>();
        List<Long> put = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            ChainId id = ChainId.of("web" + i);
            cluster.instance("a").join(id);
            long t0 = System.nanoTime();
            Chain up = b.submit(Fixtures.chainJson(id.name()));
            post.add((System.nanoTime() - t0) / 1_000_000);
            assertEquals(ChainState.ACTIVE, up.state());
            t0 = System.nanoTime();
            Chain updated = b.update(id, Fixtures.chainJson(id.name(), "vlan", 1, 1));
            put.add((System.nanoTime() - t0) / 1_000_000);
            assertEquals(org.metron.synth.TagType.VLAN, updated.deployment().tagType());
            t0 = System.nanoTime();
            assertEquals(Optional.empty(), b.remove(id));
            delete.add((System.nanoTime() - t0) / 1_000_000);
            assertTrue(a.chain(id).isEmpty());
        }
        post.sort(Long::compare);
        delete.sort(Long::compare);
        put.sort(Long::compare);
        System.out.println("non-owner write -> done (ms, sorted): POST " + post + ", PUT " + put + ", DELETE "
                + delete);
        assertTrue("median PUT " + put, put.get(put.size() / 2) < PICKUP_MEDIAN_MS);
        assertTrue("median POST " + post, post.get(post.size() / 2) < PICKUP_MEDIAN_MS);
        assertTrue("median DELETE " + delete, delete.get(delete.size() / 2) < PICKUP_MEDIAN_MS);
    }

    /** What a median must beat: half the one-second sweep the owner waited for before it followed events. */
    private static final long PICKUP_MEDIAN_MS = 500;

    @Test
    public void aPutSentToAnInstanceThatDoesNotOwnTheChainIsAppliedByItsOwner() {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        a.submit(Fixtures.chainJson("web"));
        String next = Fixtures.chainJson("web", "vlan", 2, 2);

        Chain c = b.update(ChainId.of("web"), next);

        assertEquals(ChainState.ACTIVE, c.state());
        assertEquals(Optional.empty(), c.update());
        assertEquals(org.metron.synth.TagType.VLAN, c.deployment().tagType());
        assertEquals(c, a.chain(ChainId.of("web")).orElseThrow());
        assertEquals(2, a.placement(ChainId.of("web")).orElseThrow().cores().size());
        assertEquals(1, w.agents.get(0).pipelines().size());
    }

    @Test
    public void aPutTheOwnerRefusesAnswersTheOwnersErrorAndTheRunningVersionStays() {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        Chain up = a.submit(Fixtures.chainJson("web"));
        int rules = w.switches.total();

        MetronException e = assertThrows(MetronException.class,
                () -> b.update(ChainId.of("web"), Fixtures.chainJson("web", "mac", 64, 1)));

        assertEquals(MetronException.Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("core"));
        Chain now = a.chain(ChainId.of("web")).orElseThrow();
        assertEquals(ChainState.ACTIVE, now.state());
        assertEquals(up.json(), now.json());
        assertEquals(Optional.of(MetronException.Fault.IMPOSSIBLE_PLACEMENT),
                now.update().flatMap(org.metron.app.api.ChainUpdate::refusal));
        assertEquals(rules, w.switches.total());
    }

    @Test
    public void anUpdateItsOwnerLeftIsAppliedByTheInstanceThatTakesTheChainOver() throws Exception {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        a.submit(Fixtures.chainJson("web"));
        b.chain(ChainId.of("web")); // b runs for it too (its ownership saw the chain)
        owners.get("a").close(); // a stops following the store ...
        ChainStore store = stores.get("a");
        Chain running = store.chains().get(ChainId.of("web")).orElseThrow().value();
        String next = Fixtures.chainJson("web", "vlan", 2, 2);
        store.chains().put(running.id(), running.withUpdate(Optional.of(new org.metron.app.api.ChainUpdate(
                org.metron.app.impl.ChainRequests.parse(next).json(),
                org.metron.app.impl.ChainRequests.parse(next).deployment())))); // ... after recording a PUT

        cluster.stop("a");

        long end = System.currentTimeMillis() + 10_000;
        while (b.chain(ChainId.of("web")).orElseThrow().update().isPresent() && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        Chain c = b.chain(ChainId.of("web")).orElseThrow();
        assertEquals(ChainState.ACTIVE, c.state());
        assertEquals(org.metron.synth.TagType.VLAN, c.deployment().tagType());
        assertEquals(Optional.empty(), c.update());
        assertEquals(1, w.agents.get(0).pipelines().size());
    }

    @Test
    public void aDeleteWinsOverAnUpdateNotAppliedYet() throws Exception {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        a.submit(Fixtures.chainJson("web"));
        owners.get("a").close();
        ChainStore store = stores.get("a");
        Chain running = store.chains().get(ChainId.of("web")).orElseThrow().value();
        String next = Fixtures.chainJson("web", "vlan", 2, 2);
        Chain asked = running.withUpdate(Optional.of(new org.metron.app.api.ChainUpdate(
                ChainRequests.parse(next).json(), ChainRequests.parse(next).deployment())));
        store.chains().put(running.id(), asked);
        store.chains().put(running.id(), asked.withState(ChainState.REMOVING, "deleted"));
        assertEquals(Optional.empty(), store.chains().get(running.id()).orElseThrow().value().update());

        cluster.stop("a");

        long end = System.currentTimeMillis() + 10_000;
        while (b.chain(ChainId.of("web")).isPresent() && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        assertTrue(b.chains().isEmpty());
        assertEquals(0, w.switches.total());
        assertTrue(w.agents.get(0).pipelines().isEmpty());
    }

    @Test
    public void noWriteBringsBackAChainMarkedForRemoval() {
        Chain up = w.manager.submit(Fixtures.chainJson("web"));
        ChainStore store = new ChainStore(new LocalStoreFactory(), w.switches);
        Chain tombstone = up.withState(ChainState.REMOVING, "deleted");
        store.chains().put(up.id(), tombstone);

        store.chains().put(up.id(), up.withState(ChainState.ACTIVE, "an owner finishing an operation"));
        long v = store.chains().get(up.id()).orElseThrow().version();
        assertTrue(!store.chains().replace(up.id(), v, up.withState(ChainState.DEGRADED, "")));

        assertEquals(ChainState.REMOVING, store.chains().get(up.id()).orElseThrow().value().state());
    }
}
