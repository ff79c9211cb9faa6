package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestLeadership;
import org.junit.Test;
import org.onlab.util.KryoNamespace;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.Assert.assertTrue;

/**
 * A chain this instance comes to own has its journalled scaling operation recovered; a recovery that fails (the
 * journal unreadable for a moment, as an Atomix session closed while the Raft partitions re-elect after the old
 * owner's death) is tried again. Failed before: the exception was lost in the executor and nothing tried again,
 * so the operation stayed journalled and the chain never scaled again (the 3-node cluster test's interrupted
 * split).
 */
public class ScalingTakeOverTest {
    @Test
    public void aRecoveryThatFailsOnTakeOverIsTriedAgain() throws Exception {
        World w = new World(1, Fixtures.synthesis(), 1);
        LocalStoreFactory local = new LocalStoreFactory();
        AtomicInteger failures = new AtomicInteger();
        AtomicInteger reads = new AtomicInteger();
        StoreFactory factory = new StoreFactory() {
            @Override
            @SuppressWarnings("unchecked")
            public <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace) {
                MetronMap<K, V> m = local.map(name, namespace);
                if (!ScalingStore.OPERATIONS.equals(name)) {
                    return m;
                }
                // the journal: reading all its entries fails while failures last
                return (MetronMap<K, V>) Proxy.newProxyInstance(MetronMap.class.getClassLoader(),
                        new Class<?>[] {MetronMap.class}, (proxy, method, args) -> {
                            if (method.getName().equals("snapshot")) {
                                reads.incrementAndGet();
                                if (failures.getAndDecrement() > 0) {
                                    throw new IllegalStateException("session closed");
                                }
                            }
                            try {
                                return method.invoke(m, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
        TestLeadership cluster = new TestLeadership();
        ChainId chain = ChainId.of("taken");
        cluster.instance("old").join(chain);
        try (ScalingManager scaling = new ScalingManager(w.store, factory, w.servers, w.switches, w.manager, w.manager,
                Fixtures.APP, Duration.ofSeconds(2), ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS,
                cluster.instance("next"), System::currentTimeMillis, Optional.empty(), IngressWatch.INTERVAL_MS)) {
            scaling.start();
            cluster.instance("next").join(chain);
            int atStart = reads.get();
            failures.set(1);
            cluster.stop("old"); // "next" now owns the chain and recovers what "old" left
            long end = System.currentTimeMillis() + 10_000;
            while (reads.get() < atStart + 2 && System.currentTimeMillis() < end) {
                Thread.sleep(20);
            }
            assertTrue("the failed recovery was not tried again (journal read " + (reads.get() - atStart)
                    + " times after the takeover)", reads.get() >= atStart + 2);
        }
    }
}
