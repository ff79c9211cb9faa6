package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.junit.Test;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.Assert.assertTrue;

/**
 * A chain this instance comes to own has its journalled scaling operation recovered; a recovery that fails (the
 * journal unreadable for a moment, as an Atomix session closed while the Raft partitions re-elect after the old
 * owner's death) is tried again. Failed before: the exception was lost in the executor and nothing tried again,
 * so the operation stayed journalled and the chain never scaled again (the 3-node cluster test's interrupted
 * split).
 */
public class ScalingTakeOverTest {
    /** Owns every chain once told to; tells its listeners when asked. */
    private static final class HandedOver implements Leadership {
        final List<Consumer<ChainId>> listeners = new CopyOnWriteArrayList<>();

        @Override
        public boolean actsFor(ChainId chain) {
            return true;
        }

        @Override
        public void join(ChainId chain) {
        }

        @Override
        public void release(ChainId chain) {
        }

        @Override
        public Optional<String> owner(ChainId chain) {
            return Optional.of("here");
        }

        @Override
        public void addListener(Consumer<ChainId> gained) {
            listeners.add(gained);
        }

        @Override
        public void removeListener(Consumer<ChainId> gained) {
            listeners.remove(gained);
        }
    }

    /** The scaling journal's map, whose reads of all entries fail {@code failures} times. */
    private static final class Flaky<K, V> implements MetronMap<K, V> {
        final MetronMap<K, V> map;
        final AtomicInteger failures;
        final AtomicInteger reads = new AtomicInteger();

        Flaky(MetronMap<K, V> map, int failures) {
            this.map = map;
            this.failures = new AtomicInteger(failures);
        }

        @Override
        public Optional<Versioned<V>> get(K key) {
            return map.get(key);
        }

        @Override
        public boolean putIfAbsent(K key, V value) {
            return map.putIfAbsent(key, value);
        }

        @Override
        public boolean replace(K key, long version, V value) {
            return map.replace(key, version, value);
        }

        @Override
        public void put(K key, V value) {
            map.put(key, value);
        }

        @Override
        public Optional<V> remove(K key) {
            return map.remove(key);
        }

        @Override
        public Map<K, V> snapshot() {
            reads.incrementAndGet();
            if (failures.getAndDecrement() > 0) {
                throw new IllegalStateException("session closed");
            }
            return map.snapshot();
        }
    }

    @Test
    public void aRecoveryThatFailsOnTakeOverIsTriedAgain() throws Exception {
        World w = new World(1, Fixtures.synthesis(), 1);
        LocalStoreFactory local = new LocalStoreFactory();
        Flaky<?, ?>[] journal = new Flaky<?, ?>[1];
        StoreFactory factory = new StoreFactory() {
            @Override
            public <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace) {
                MetronMap<K, V> m = local.map(name, namespace);
                if (!ScalingStore.OPERATIONS.equals(name)) {
                    return m;
                }
                Flaky<K, V> f = new Flaky<>(m, 0);
                journal[0] = f;
                return f;
            }
        };
        HandedOver leadership = new HandedOver();
        try (ScalingManager scaling = new ScalingManager(w.store, factory, w.servers, w.switches, w.manager,
                Fixtures.APP, Duration.ofSeconds(2), ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS,
                leadership, System::currentTimeMillis, Optional.empty(), IngressWatch.INTERVAL_MS)) {
            scaling.start();
            int atStart = journal[0].reads.get();
            journal[0].failures.set(1);
            leadership.listeners.forEach(l -> l.accept(ChainId.of("taken")));
            long end = System.currentTimeMillis() + 10_000;
            while (journal[0].reads.get() < atStart + 2 && System.currentTimeMillis() < end) {
                Thread.sleep(20);
            }
            assertTrue("the failed recovery was not tried again (journal read " + (journal[0].reads.get() - atStart)
                    + " times after the takeover)", journal[0].reads.get() >= atStart + 2);
        }
    }
}
