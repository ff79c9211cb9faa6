package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * {@link ChainManager#reconcile}: what an instance does for a chain it comes to act for, left in each state by an
 * instance that stopped (simulated by writing that state into the store, as the stopped instance left it).
 */
public class ChainReconcilerTest {

    private static World active(int servers) {
        World w = new World(servers, Fixtures.synthesis(), 42);
        w.manager.submit(Fixtures.chainJson("web"));
        return w;
    }

    private static Chain chain(World w) {
        return w.manager.chain(ChainId.of("web")).orElseThrow();
    }

    private static void leave(World w, ChainState s) {
        Chain c = chain(w);
        w.store.chains().put(c.id(), c.withState(s, ""));
    }

    @Test
    public void anActiveChainWhoseServerAnswersIsLeftAlone() {
        World w = active(1);
        Chain before = chain(w);
        List<String> switchLog = w.switches.log();
        int agentCalls = w.agents.get(0).calls().size();

        assertEquals("nothing: ACTIVE, its server registered", w.manager.reconcile(before.id()));

        assertEquals(before, chain(w));
        assertEquals(switchLog, w.switches.log());
        assertEquals(agentCalls, w.agents.get(0).calls().size());
    }

    @Test
    public void aBringUpLeftHalfWayIsDoneAgainOnceWithNothingTwice() {
        for (ChainState s : List.of(ChainState.SUBMITTED, ChainState.SYNTHESIZED, ChainState.PLACED)) {
            World w = active(1);
            ChainId id = ChainId.of("web");
            int rules = w.switches.total();
            // the instance stopped after deploying, before recording what it installed
            w.store.installed().remove(id);
            leave(w, s);

            String done = w.manager.reconcile(id);

            assertEquals(s + ": " + done, ChainState.ACTIVE, chain(w).state());
            assertEquals(List.of("web"), List.copyOf(w.agents.get(0).pipelines().keySet()));
            assertEquals("the same rules, none twice", rules, w.switches.total());
            assertEquals(rules, w.manager.rules(null).size());
            // idempotent: a second call finds it settled
            List<String> log = w.switches.log();
            assertEquals("nothing: ACTIVE, its server registered", w.manager.reconcile(id));
            assertEquals(log, w.switches.log());
        }
    }

    @Test
    public void aDeployedChainWhosePipelineRunsBecomesActiveWithoutRedeploying() {
        World w = active(1);
        leave(w, ChainState.DEPLOYED);
        List<String> log = w.switches.log();

        assertEquals("ACTIVE: its pipeline runs", w.manager.reconcile(ChainId.of("web")));

        assertEquals(ChainState.ACTIVE, chain(w).state());
        assertEquals(log, w.switches.log());
    }

    @Test
    public void aRemovalLeftHalfWayContinuesAndNeverBringsTheChainBack() {
        World w = active(2);
        ChainId id = ChainId.of("web");
        leave(w, ChainState.REMOVING);

        assertEquals("removed", w.manager.reconcile(id));

        assertTrue(w.manager.chain(id).isEmpty());
        assertEquals(0, w.switches.total());
        assertTrue(w.agents.stream().allMatch(a -> a.pipelines().isEmpty()));
        assertEquals("nothing: no such chain", w.manager.reconcile(id));
    }

    @Test
    public void aDegradedChainWhoseAgentAnswersAgainIsRestoredInPlace() {
        World w = active(1);
        ChainId id = ChainId.of("web");
        DeviceId server = w.manager.placement(id).get().server().get();
        w.agents.get(0).unreachable(true);
        w.manager.serverLost(server);
        assertEquals(ChainState.DEGRADED, chain(w).state());
        assertTrue(w.manager.reconcile(id).endsWith("does not answer: DEGRADED"));

        w.agents.get(0).restart().unreachable(false);
        assertEquals("server " + server + " answers: ACTIVE", w.manager.reconcile(id));
        assertTrue(w.agents.get(0).pipelines().containsKey("web"));
        assertEquals(server, w.store.installed().get(id).map(Versioned::value).get().server().get());
    }

    /**
     * Two chains DEGRADED on one server whose agent answers again, another thread holding the second chain's lock:
     * the first chain's reconcile, which holds its own lock, restores that chain alone and returns; the second is
     * restored by its own reconcile. Before, the reconcile restored every chain of the server, taking the second's
     * lock under its own: it waited here for as long as that lock was held (a thread holding the second's lock and
     * waiting for the first's would have deadlocked with it).
     */
    @Test
    public void aDegradedChainsReconcileRestoresItAloneWithoutTakingAnotherChainsLock() throws Exception {
        World w = active(1);
        w.manager.submit(Fixtures.chainJsonAt("db", 5));
        ChainId web = ChainId.of("web");
        ChainId db = ChainId.of("db");
        DeviceId server = w.manager.placement(web).get().server().get();
        assertEquals(server, w.manager.placement(db).get().server().get());
        w.agents.get(0).unreachable(true);
        w.manager.serverLost(server);
        assertEquals(ChainState.DEGRADED, w.manager.chain(db).get().state());
        w.agents.get(0).restart().unreachable(false);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (w.store.lockFor(db)) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder.start();
        held.await();
        try {
            CompletableFuture<String> reconciled = CompletableFuture.supplyAsync(() -> w.manager.reconcile(web));
            assertEquals("server " + server + " answers: ACTIVE", reconciled.get(10, TimeUnit.SECONDS));
        } finally {
            release.countDown();
            holder.join();
        }
        assertEquals(Set.of("web"), w.agents.get(0).pipelines().keySet());
        assertEquals(ChainState.DEGRADED, w.manager.chain(db).get().state());

        assertEquals("server " + server + " answers: ACTIVE", w.manager.reconcile(db));
        assertEquals(Set.of("web", "db"), w.agents.get(0).pipelines().keySet());
    }

    @Test
    public void anActiveChainOnAServerGoneFromTheRegistryMovesOff() {
        World w = active(2);
        ChainId id = ChainId.of("web");
        DeviceId lost = w.manager.placement(id).get().server().get();
        w.servers.remove(lost);

        assertEquals("moved off " + lost, w.manager.reconcile(id));
        assertEquals(ChainState.ACTIVE, chain(w).state());
        assertTrue(!w.manager.placement(id).get().server().get().equals(lost));
    }
}
