package org.metron.app.gui;

import org.junit.Test;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;
import org.onosproject.ui.table.TableModel;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The view's tables show chains, classes entry by entry with tags and cores, and per-core load. */
public class MetronTablesTest {
    @Test
    public void tablesReflectTheDeployedChain() {
        World w = new World(1, Fixtures.synthesis(), 1);
        w.manager.submit(Fixtures.chainJson("gui", "vlan", 2, 1));

        TableModel chains = MetronTables.CHAINS.rows(w.manager, null);
        assertEquals(1, chains.rowCount());
        assertEquals("ACTIVE", chains.getRows()[0].get("state"));
        assertEquals(Fixtures.serverId(0), chains.getRows()[0].get("server"));
        assertEquals("no reason: a word, not an empty cell", "-", chains.getRows()[0].get("reason"));

        TableModel classes = MetronTables.CLASSES.rows(w.manager, null);
        assertEquals("one row per entry, one entry per class", 3, classes.rowCount());
        assertEquals("1 of 1", classes.getRows()[1].get("entry"));
        assertEquals("udp", classes.getRows()[1].get("match"));
        assertTrue(classes.getRows()[1].get("does").toString(), classes.getRows()[1].get("does").toString()
                .startsWith("tagged 02:4d:00:00:00:01 vlan 2 at the switch to group g1, core 1 on "
                        + Fixtures.serverId(0)));

        TableModel cores = MetronTables.CORES.rows(w.manager, null);
        assertEquals(4, cores.rowCount());
        assertEquals("10%", cores.getRows()[0].get("load"));
        assertEquals("gui", cores.getRows()[1].get("use"));
        assertEquals("free", cores.getRows()[2].get("use"));

        TableModel nics = MetronTables.NICS.rows(w.manager, null);
        assertEquals(2, nics.rowCount());
        assertEquals("eth0", nics.getRows()[0].get("nic"));
        assertEquals("fanout", nics.getRows()[0].get("dispatch"));
        assertEquals("mac, vlan", nics.getRows()[0].get("tags"));
        assertEquals("not probed", nics.getRows()[0].get("capabilities"));
        assertEquals("no refusal: a word, not an empty cell", "-", nics.getRows()[0].get("refused"));
    }

    /** A server netcfg entry ONOS refused is a problem: the device, and the field with its reason and time. */
    @Test
    public void theProblemsTableListsRefusedServerNetcfgEntries() {
        World w = new World(1, Fixtures.synthesis(), 1);
        try (ScalingManager scaling = Fixtures.scaling(w, new LocalStoreFactory())) {
            assertEquals(0, MetronTables.PROBLEMS.rows(w.manager, scaling).rowCount());
            w.servers.refuse(new ServerConfigErrors.Refused(DeviceId.deviceId("metron:10.0.0.7:50051"), "deadlineMs",
                    "not a positive number: soon", Instant.parse("2026-11-28T10:00:00Z")));
            TableModel problems = MetronTables.PROBLEMS.rows(w.manager, scaling);
            assertEquals(1, problems.rowCount());
            assertEquals("server netcfg refused", problems.getRows()[0].get("what"));
            assertEquals("metron:10.0.0.7:50051", problems.getRows()[0].get("subject"));
            assertEquals("metron.deadlineMs: not a positive number: soon (refused at 2026-11-28T10:00:00Z)",
                    problems.getRows()[0].get("detail"));
        }
    }

    /** The ONOS view's HTML has a section for every table, with every column a title is given for. */
    @Test
    public void theGuiViewShowsEveryTableAndColumn() throws Exception {
        String html;
        try (var in = MetronTables.class.getResourceAsStream("/app/view/metron/metron.html")) {
            html = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (ViewTable t : MetronTables.ALL) {
            int at = html.indexOf("ng-controller=\"OvMetron" + t.id() + "Ctrl\"");
            assertTrue(t.id(), at >= 0);
            int end = html.indexOf("</table>", at);
            String section = html.substring(at, end);
            for (int i = 0; i < t.columns().size(); i++) {
                if (!t.headers().get(i).isEmpty()) {
                    assertTrue(t.id() + "." + t.columns().get(i), section.contains("{{r." + t.columns().get(i) + "}}"));
                    assertTrue(t.id() + "." + t.columns().get(i), section.contains("<th>" + t.headers().get(i) + "</th>"));
                }
            }
            assertEquals(t.id(), t.headers().stream().filter(h -> !h.isEmpty()).count(),
                    section.split("<th>", -1).length - 1);
        }
        String js;
        try (var in = MetronTables.class.getResourceAsStream("/app/view/metron/metron.js")) {
            js = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(js, js.contains("var TABLES = [" + MetronTables.ALL.stream().map(t -> "'" + t.id() + "'")
                .collect(Collectors.joining(", ")) + "];"));
    }
}
