package org.metron.app.gui;

import org.junit.Test;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.ui.table.TableModel;

import static org.junit.Assert.assertEquals;

/** The GUI tables show chains, classes with tags and cores, and per-core load. */
public class MetronTablesTest {
    @Test
    public void tablesReflectTheDeployedChain() {
        World w = new World(1, Fixtures.synthesis(), 1);
        w.manager.submit(Fixtures.chainJson("gui", "vlan", 2, 1));

        TableModel chains = new TableModel(MetronTables.CHAIN_COLUMNS);
        MetronTables.chains(w.manager, chains);
        assertEquals(1, chains.rowCount());
        assertEquals("ACTIVE", chains.getRows()[0].get("state"));
        assertEquals(Fixtures.serverId(0), chains.getRows()[0].get("server"));

        TableModel classes = new TableModel(MetronTables.CLASS_COLUMNS);
        MetronTables.classes(w.manager, classes);
        assertEquals(3, classes.rowCount());
        assertEquals("02:4d:00:00:00:01 vlan 2", classes.getRows()[1].get("tag"));
        assertEquals("1", classes.getRows()[1].get("core"));

        TableModel cores = new TableModel(MetronTables.CORE_COLUMNS);
        MetronTables.cores(w.manager, cores);
        assertEquals(4, cores.rowCount());
        assertEquals("10%", cores.getRows()[0].get("load"));
        assertEquals("gui", cores.getRows()[1].get("chain"));
        assertEquals("-", cores.getRows()[2].get("chain"));
    }
}
