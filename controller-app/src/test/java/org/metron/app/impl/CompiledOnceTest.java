package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * A chain's definition is parsed and synthesized once per target profile (issue 25 item 2): failover backups,
 * server recovery and the views take it from the one cache ({@link ChainCompilers}) instead of synthesizing it
 * again on every pass; a new definition (PUT) is compiled anew.
 */
public class CompiledOnceTest {
    private final AtomicInteger compiles = new AtomicInteger();
    private final World w = new World(1, (spec, profile) -> {
        compiles.incrementAndGet();
        return Fixtures.synthesis().compile(spec, profile);
    }, 5);
    private final ChainId id = ChainId.of("web");

    @Test
    public void backupsRecoveryAndViewsDoNotSynthesizeAPlacedChainAgain() {
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("web")).state());
        w.manager.awaitBackups();
        int placed = compiles.get();
        assertTrue(placed > 0);

        for (int i = 0; i < 3; i++) {
            w.manager.refreshBackups(id);
        }
        w.manager.awaitBackups();
        w.agents.get(0).restart(); // lost its pipeline: recovery builds it again from the placement
        assertEquals(List.of(id), new ServerRecovery(w.store, w.manager, Duration.ofSeconds(1))
                .restore(w.servers.servers().iterator().next()));
        w.manager.compiled(id);
        w.manager.trafficClasses(id);

        assertEquals(placed, compiles.get());
    }

    @Test
    public void aNewDefinitionIsCompiledAnew() {
        w.manager.submit(Fixtures.chainJson("web"));
        w.manager.awaitBackups();
        int before = compiles.get();
        w.manager.update(id, Fixtures.chainJson("web", "vlan", 2, 2));
        assertTrue(compiles.get() > before);
    }

    /**
     * Where a chain has backups on another device: the update's placement compiled the new definition for the
     * devices it probed; the backup pass after it, further passes and the views compile no (definition, profile)
     * pair twice.
     */
    @Test
    public void noDefinitionIsCompiledTwiceForAProfileAcrossAnUpdateAndItsBackups() {
        Map<String, Integer> byPair = new ConcurrentHashMap<>();
        TwoPathWorld t = new TwoPathWorld((spec, profile) -> {
            byPair.merge(spec.toJson() + " @ " + profile, 1, Integer::sum);
            return Fixtures.synthesis().compile(spec, profile);
        });
        assertEquals(ChainState.ACTIVE, t.manager.submit(TwoPathWorld.json("web")).state());
        t.manager.awaitBackups();
        assertEquals(ChainState.ACTIVE, t.manager.update(id, TwoPathWorld.json("web").replace("dst port 80",
                "dst port 81")).state());
        t.manager.awaitBackups();
        for (int i = 0; i < 3; i++) {
            t.manager.refreshBackups(id);
        }
        t.manager.awaitBackups();
        t.manager.compiled(id);
        t.manager.trafficClasses(id);
        assertTrue(byPair.size() > 2);
        byPair.forEach((pair, n) -> assertEquals(pair, 1, (int) n));
    }
}
