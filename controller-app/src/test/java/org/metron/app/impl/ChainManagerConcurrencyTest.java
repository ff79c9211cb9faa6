package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
}
