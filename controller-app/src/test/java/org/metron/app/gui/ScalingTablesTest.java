package org.metron.app.gui;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.scaling.ScalingDecision;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.scaling.ScalingStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.ui.table.TableModel;

import java.util.List;

import static org.junit.Assert.assertEquals;

/** The GUI's scaling tables: every placed group with its tag and core, and the decision history. */
public class ScalingTablesTest {
    @Test
    public void groupsAndHistoryReflectTheStore() {
        World w = new World(1, Fixtures.synthesis(), 1);
        LocalStoreFactory factory = new LocalStoreFactory();
        try (ScalingManager scaling = Fixtures.scaling(w, factory)) {
            w.manager.submit(Fixtures.chainJson("gui"));
            ScalingStore history = new ScalingStore(factory);
            history.record(new ScalingEvent(2_000, ChainId.of("gui"), ScalingDecision.Kind.MERGE,
                    List.of("g0", "g0.1"), List.of(1, 2), List.of(1), List.of(2), "idle", ScalingEvent.Outcome.DONE,
                    "", 2100, 80, "prepare 3, nic+pipeline 40"));
            history.record(new ScalingEvent(1_000, ChainId.of("gui"), ScalingDecision.Kind.SPLIT,
                    List.of("g0", "g0.1"), List.of(1), List.of(1, 2), List.of(2), "busy", ScalingEvent.Outcome.DONE,
                    "", 140, 90, "detect 50"));

            List<GroupAssignment> placed = w.manager.placement(ChainId.of("gui")).get().groups();
            TableModel groups = ScalingTables.GROUPS.rows(w.manager, scaling);
            assertEquals(placed.size(), groups.rowCount());
            for (int i = 0; i < placed.size(); i++) {
                assertEquals(placed.get(i).groupId(), groups.getRows()[i].get("group"));
                assertEquals(org.metron.app.rest.MetronText.groupTag(placed.get(i).tag()),
                        groups.getRows()[i].get("tag"));
                assertEquals(Integer.toString(placed.get(i).core()), groups.getRows()[i].get("core"));
                assertEquals("no measurement yet", "-", groups.getRows()[i].get("load"));
            }

            TableModel rows = ScalingTables.HISTORY.rows(w.manager, scaling);
            assertEquals(2, rows.rowCount());
            assertEquals("oldest first", "split", rows.getRows()[0].get("kind"));
            assertEquals("1 -> 1, 2", rows.getRows()[0].get("cores"));
            assertEquals("merge", rows.getRows()[1].get("kind"));
            assertEquals("2100", rows.getRows()[1].get("reactionMs"));
        }
    }
}
