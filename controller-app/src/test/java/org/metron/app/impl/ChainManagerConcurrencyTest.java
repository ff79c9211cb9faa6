package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.Leadership;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Chains submitted in parallel never share a core or a tag; a non-leader instance refuses to act. */
public class ChainManagerConcurrencyTest {

    @Test
    public void parallelSubmissionsGetDisjointCoresAndTags() throws Exception {
        World w = new World(2, Fixtures.synthesis(), 5);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String name = "p" + i;
            int port = 10 + i;
            fs.add(pool.submit(() -> w.manager.submit(Fixtures.chainJsonAt(name, port))));
        }
        for (Future<?> f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        Set<String> cores = new HashSet<>();
        for (Placement p : w.manager.placements()) {
            p.cores().forEach(c -> assertTrue("core used twice: " + p.server() + "/" + c,
                    cores.add(p.server() + "/" + c)));
        }
        assertEquals(8, cores.size());
        assertEquals(16, w.manager.tags().stream().map(t -> t.tag()).distinct().count());
        // 2 servers x 4 cores are now all taken: the ninth chain cannot be placed
        assertEquals(MetronException.Fault.IMPOSSIBLE_PLACEMENT, assertThrows(MetronException.class,
                () -> w.manager.submit(Fixtures.chainJsonAt("p9", 30))).fault());
    }

    @Test
    public void anInstanceThatIsNotLeaderStoresNothing() {
        World w = new World(1, Fixtures.synthesis(), 5);
        Leadership never = new Leadership() {
            @Override
            public boolean actsFor(ChainId chain) {
                return false;
            }

            @Override
            public void join(ChainId chain) {
            }

            @Override
            public void release(ChainId chain) {
            }

            @Override
            public java.util.Optional<String> owner(ChainId chain) {
                return java.util.Optional.empty();
            }

            @Override
            public void addListener(java.util.function.Consumer<ChainId> gained) {
            }

            @Override
            public void removeListener(java.util.function.Consumer<ChainId> gained) {
            }
        };
        ChainManager other = new ChainManager(new ChainStore(new LocalStoreFactory()), w.servers, w.switches, never,
                new PlacementEngine(w.servers, w.network, w.switches, new Random(1), Duration.ofSeconds(1)),
                new RulePlanner(Fixtures.APP, w.network), new Deployer(w.switches, Duration.ofSeconds(1)),
                Duration.ofSeconds(1), Fixtures.synthesis());
        MetronException e = assertThrows(MetronException.class, () -> other.submit(Fixtures.chainJson("n")));
        assertEquals(MetronException.Fault.NOT_LEADER, e.fault());
        assertTrue(other.chains().isEmpty());
        assertEquals(0, w.switches.total());
    }
}
