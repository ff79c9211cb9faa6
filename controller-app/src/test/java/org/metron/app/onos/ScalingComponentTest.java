package org.metron.app.onos;

import org.junit.After;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.app.scaling.ScalingEvent;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Inside ONOS the lifecycle component and the scaling component are two OSGi components; activated over the
 * same service instances (as OSGi wires them), they serialize on the one chain store's per-chain monitor.
 */
public class ScalingComponentTest {
    private static final ChainId FW = ChainId.of("fw");

    private final OnosServices onos = new OnosServices(Fixtures.network(1), new TestSwitches(),
            new TestServers().add(Fixtures.server(0, new TestAgent("a:1", 4, 0).nic("eth0", true, 8)
                    .nic("eth1", true, 8))));
    private final MetronComponent metron = onos.activateMetron();
    private final ScalingComponent scaling = new ScalingComponent();
    private final ExecutorService callers = Executors.newFixedThreadPool(2);

    @After
    public void deactivate() throws InterruptedException {
        callers.shutdownNow();
        scaling.deactivate();
        OnosServices.deactivate(metron);
    }

    @Test
    public void aSplitAndARemoveOfOneChainWaitForTheSameMonitor() throws Exception {
        scaling.coreService = onos.coreService;
        scaling.switches = onos.switches;
        scaling.servers = onos.servers;
        scaling.leadership = onos.leadership;
        scaling.chainStores = onos.chainStores;
        scaling.storeFactory = onos.storeFactory;
        scaling.compiled = metron;
        scaling.moves = metron;
        scaling.deviceService = onos.deviceService;
        scaling.network = onos.network;
        scaling.activate();
        assertEquals(ChainState.ACTIVE, metron.submit(Fixtures.chainJson("fw")).state());

        Object monitor = onos.chainStores.chainStore().lockFor(FW);
        Future<ScalingEvent> split;
        Future<?> remove;
        AtomicLong splitThread = new AtomicLong();
        AtomicLong removeThread = new AtomicLong();
        synchronized (monitor) {
            split = callers.submit(() -> {
                splitThread.set(Thread.currentThread().getId());
                return scaling.split(FW, "g0");
            });
            awaitWaiter(monitor, splitThread, split, "the scaling component's split");
            remove = callers.submit(() -> {
                removeThread.set(Thread.currentThread().getId());
                metron.remove(FW);
                return null;
            });
            awaitWaiter(monitor, removeThread, remove, "the lifecycle component's remove");
            assertFalse(split.isDone());
            assertTrue(blockedOn(monitor, splitThread.get()));
        }
        remove.get(10, TimeUnit.SECONDS);
        assertTrue(metron.chain(FW).isEmpty());
        try {
            split.get(10, TimeUnit.SECONDS); // before the remove or after it, it saw the chain whole or not at all
        } catch (ExecutionException e) {
            assertTrue(e.getCause().toString(), e.getCause() instanceof MetronException);
        }
    }

    /**
     * Waits until {@code op}'s thread is blocked entering {@code monitor}, which this thread holds (other threads of
     * the components, such as a load round, may wait there too). An operation that locked a monitor of its own
     * finishes instead (or blocks on another object), and the test fails.
     */
    private static void awaitWaiter(Object monitor, AtomicLong opThread, Future<?> op, String what)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (op.isDone()) {
                fail(what + " finished while the shared chain store's monitor for the chain was held: "
                        + outcome(op));
            }
            if (opThread.get() != 0 && blockedOn(monitor, opThread.get())) {
                return;
            }
            Thread.sleep(5);
        }
        fail(what + " did not wait for the shared chain store's monitor for the chain");
    }

    private static String outcome(Future<?> op) throws InterruptedException {
        try {
            return "returned " + op.get();
        } catch (ExecutionException e) {
            return "threw " + e.getCause();
        }
    }

    /** Whether thread {@code id} is blocked entering {@code monitor}, held by this thread. */
    private static boolean blockedOn(Object monitor, long id) {
        ThreadInfo t = ManagementFactory.getThreadMXBean().getThreadInfo(id);
        LockInfo l = t == null ? null : t.getLockInfo();
        return t != null && t.getThreadState() == Thread.State.BLOCKED && l != null
                && l.getIdentityHashCode() == System.identityHashCode(monitor)
                && t.getLockOwnerId() == Thread.currentThread().getId();
    }
}
