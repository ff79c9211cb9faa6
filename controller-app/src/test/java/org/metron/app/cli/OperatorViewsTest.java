package org.metron.app.cli;

import org.metron.app.testing.Codecs;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.gui.MetronTables;
import org.metron.app.gui.ViewTable;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.testing.Console;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.ui.table.TableModel;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * What operators read in the Karaf CLI and the GUI's tables, for a FW->NAPT chain synthesized by the real
 * synthesizer: a class is its ordered entries (never their conjunction), each with what happens to its packets
 * and the switch rules it became, and no value anywhere reads "Optional[...]". Switches and agent are the
 * in-memory test doubles (the embedded host's EmbeddedHostTest shows the same on real OVS and a real agent).
 */
public class OperatorViewsTest {
    /** Allows UDP to 5000 and TCP to 80: the allowed class has exactly these two entries. */
    static final String FW_NAPT = "{\"name\": \"fwnapt\", \"nfs\": ["
            + "{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow udp "
            + "dst port 5000, allow tcp dst port 80, deny all) -> Unstrip(14) -> ToDevice(out0);\"},"
            + "{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: "
            + "IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\"}],"
            + " \"links\": [{\"from\": \"fw.out0\", \"to\": \"napt.in0\"}], \"ingress\": [\"fw.in0\"],"
            + " \"egress\": [\"napt.out0\"], \"deployment\": {\"tagType\": \"mac\", \"cpuCores\": 1,"
            + " \"ingressPoint\": \"" + Fixtures.S1 + "/1\", \"egressPoint\": \"" + Fixtures.S1 + "/3\"}}";

    @Rule
    public TemporaryFolder tmp = new TemporaryFolder();

    @Rule
    public final Console console = new Console();
    private World w;
    private ScalingManager scaling;

    @Before
    public void setUp() {
        w = new World(1, Synthesis.SYNTHESIZER, 3);
        scaling = Fixtures.scaling(w, new LocalStoreFactory());
    }

    @After
    public void tearDown() {
        scaling.close();
    }

    private String run(MetronCommand c, boolean json) throws Exception {
        console.reset();
        c.setService(w.manager);
        c.setScaling(scaling);
        c.setCodecs(Codecs.CONTEXT);
        if (json) {
            java.lang.reflect.Field f = org.onosproject.cli.AbstractShellCommand.class.getDeclaredField("json");
            f.setAccessible(true);
            f.set(c, true);
        }
        c.doExecute();
        return console.text();
    }

    @Test
    public void aClassReadsAsItsOrderedEntriesWithWhatEachDoesAndTheRulesItBecame() throws Exception {
        assertEquals(ChainState.ACTIVE, w.manager.submit(FW_NAPT).state());
        TrafficClassInfo allowed = w.manager.trafficClasses(ChainId.of("fwnapt")).stream()
                .filter(c -> c.disposition() == TrafficClassInfo.Disposition.SERVER).findFirst().orElseThrow();
        assertEquals(allowed.toString(), 2, allowed.entries().size());

        String tcs = run(new TrafficClassesCommand(), false);
        List<String> lines = Arrays.asList(tcs.split("\n"));
        for (String line : lines) {
            assertFalse("one line joins two entries: " + line, line.contains("dst port 5000")
                    && line.contains("dst port 80"));
        }
        int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("chain=fwnapt class=" + allowed.classId()
                + " server ")).findFirst().orElseThrow(() -> new AssertionError(tcs)));
        // the class, then per entry: the entry, what happens to its packets, the rule it became on s1
        assertTrue(tcs, lines.get(header + 1).matches("    entry 1/2: ip vers 4 and ip proto 17 .*dst port 5000"));
        assertTrue(tcs, lines.get(header + 2).startsWith("        does: tagged 02:4d:00:01:00:00 at the switch to "
                + "group g0, core "));
        assertTrue(tcs, lines.get(header + 2).endsWith(" on metron:server0: " + allowed.operations()));
        assertTrue(tcs, lines.get(header + 3).matches("        rule: " + Fixtures.S1 + " prio \\d+: .*IP_PROTO:17.*"
                + "UDP_DST:5000 -> .*ETH_DST:02:4D:00:01:00:00.*"));
        assertTrue(tcs, lines.get(header + 4).matches("    entry 2/2: ip vers 4 and ip proto 6 .*dst port 80"));
        assertTrue(tcs, lines.get(header + 6).matches("        rule: .*TCP_DST:80 -> .*"));
        assertTrue("the drop class's entries are dropped by the switch", tcs.contains("does: dropped at the switch"));

        // the GUI's (and the dashboard's) class table: one row per entry
        TableModel classes = table("Class").rows(w.manager, scaling);
        List<TableModel.Row> rows = Arrays.stream(classes.getRows())
                .filter(r -> r.get("classId").equals(Integer.toString(allowed.classId()))).collect(Collectors.toList());
        assertEquals(2, rows.size());
        assertEquals("1 of 2", rows.get(0).get("entry"));
        assertEquals(allowed.entries().get(0).match(), rows.get(0).get("match"));
        assertEquals("switch", rows.get(1).get("classified"));
        assertTrue(rows.get(1).get("rules").toString(), rows.get(1).get("rules").toString().contains("TCP_DST:80"));
        for (TableModel.Row r : classes.getRows()) {
            String match = r.get("match").toString();
            assertFalse(match, match.contains("dst port 5000") && match.contains("dst port 80"));
        }
    }

    @Test
    public void noValueReadsAsAnOptional() throws Exception {
        assertEquals(ChainState.ACTIVE, w.manager.submit(FW_NAPT).state());
        // a chain the switch runs alone: no server, so every Optional of its placement is empty
        // (IPv4 UDP only: port tests and IPv6 protocol tests need software for fragments, see synthesizer/README.md)
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJsonAt("alone", 2).replace(
                "IPFilter(allow tcp dst port 80, allow udp, deny all)", "IPFilter(allow ip vers 4 and udp, deny all)"))
                .state());
        assertTrue(w.manager.placement(ChainId.of("alone")).orElseThrow().server().isEmpty());
        File file = tmp.newFile("c.json");
        Files.writeString(file.toPath(), Fixtures.chainJsonAt("dry", 4));

        List<String> outputs = new ArrayList<>();
        for (boolean json : new boolean[] {false, true}) {
            ChainAddCommand dry = new ChainAddCommand();
            dry.file = file.getPath();
            dry.dryRun = true;
            outputs.add(run(dry, json));
            for (MetronCommand c : List.of(new ChainsCommand(), new TrafficClassesCommand(), new PlacementCommand(),
                    new ServersCommand(), new RulesCommand(), new ScalingCommand())) {
                outputs.add(run(c, json));
            }
        }
        for (ViewTable t : MetronTables.ALL) {
            for (TableModel.Row r : t.rows(w.manager, scaling).getRows()) {
                outputs.add(Arrays.toString(r.getAsFormattedStrings()));
            }
        }
        for (String o : outputs) {
            assertFalse(o, o.contains("Optional["));
            assertFalse(o, o.contains("Optional.empty"));
        }
        assertTrue(String.join("\n", outputs), outputs.stream().anyMatch(o -> o.contains("fwnapt")));
    }

    private static ViewTable table(String id) {
        return MetronTables.ALL.stream().filter(t -> t.id().equals(id)).findFirst().orElseThrow();
    }
}
