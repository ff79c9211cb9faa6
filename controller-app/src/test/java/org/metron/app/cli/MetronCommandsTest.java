package org.metron.app.cli;

import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.testing.Console;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** Every command's doExecute against the real ChainManager, reading what it prints. */
public class MetronCommandsTest {
    @Rule
    public TemporaryFolder tmp = new TemporaryFolder();

    @Rule
    public final Console console = new Console();
    private World w;
    private org.metron.app.scaling.ScalingManager scaling;

    @Before
    public void setUp() {
        w = new World(2, Fixtures.synthesis(), 42);
        scaling = Fixtures.scaling(w, new org.metron.app.local.LocalStoreFactory());
    }

    @org.junit.After
    public void tearDown() {
        scaling.close();
    }

    private String run(MetronCommand c) throws Exception {
        console.reset();
        c.setService(w.manager);
        c.setScaling(scaling);
        c.doExecute();
        return console.text();
    }

    private File file(String name, String content) throws Exception {
        File f = tmp.newFile(name);
        Files.write(f.toPath(), content.getBytes(StandardCharsets.UTF_8));
        return f;
    }

    @Test
    public void addWithUpdateReplacesTheRunningChainMakeBeforeBreak() throws Exception {
        ChainAddCommand add = new ChainAddCommand();
        add.file = file("web.json", Fixtures.chainJson("web")).getPath();
        assertEquals("chain web ACTIVE", run(add).trim());
        String before = w.manager.placement(ChainId.of("web")).get().groups().get(0).groupId();

        ChainAddCommand upd = new ChainAddCommand();
        upd.file = file("web2.json", Fixtures.chainJson("web", "mac", 2, 1)).getPath();
        upd.update = "web";
        String out = run(upd).trim();
        assertTrue(out, out.startsWith("chain web ACTIVE: updated from version "));
        assertTrue(out, out.contains("make-before-break"));
        String after = w.manager.placement(ChainId.of("web")).get().groups().get(0).groupId();
        assertTrue(before + " -> " + after, after.startsWith(before + "~v"));
    }

    @Test
    public void addListInspectRemove() throws Exception {
        ChainAddCommand dry = new ChainAddCommand();
        dry.file = file("web.json", Fixtures.chainJson("web")).getPath();
        dry.dryRun = true;
        String d = run(dry);
        assertTrue(d, d.contains("chain web: 3 classes, 2 groups, 4 offload rules; would run on metron:server0"));
        assertTrue(w.manager.chains().isEmpty());

        ChainAddCommand add = new ChainAddCommand();
        add.file = dry.file;
        assertEquals("chain web ACTIVE", run(add).trim());

        String chains = run(new ChainsCommand());
        assertTrue(chains, chains.contains("name=web state=ACTIVE ingress=" + Fixtures.S1 + "/1"));

        TrafficClassesCommand tcs = new TrafficClassesCommand();
        String t = run(tcs);
        assertEquals(t, 3, t.split("\nchain=web class=", -1).length);
        assertTrue(t, t.contains("\n    entry 1/1: tcp dst port 80\n        does: tagged 02:4d:00:01:00:00 at the switch"));
        assertTrue(t, t.contains("chain=web class=0 server group=g0 tag=02:4d:00:01:00:00 core=0 server=metron:server0"));

        String p = run(new PlacementCommand());
        assertTrue(p, p.contains("chain=web server=metron:server0 nic=eth0"));
        assertTrue(p, p.contains("group=g1 server=metron:server0 tag=mac 02:4d:00:02 core=0 classes=1"));

        String s = run(new ServersCommand());
        assertTrue(s, s.contains("core=0 load=10% chain=web"));
        assertTrue(s, s.contains("core=3 load=10% free"));
        assertTrue(s, s.contains("    nic=eth1 dispatch=fanout tags=mac, vlan possible=fanout capabilities=not probed "
                + "refused=-\n"));

        RulesCommand rules = new RulesCommand();
        rules.device = Fixtures.S2;
        String r = run(rules);
        assertEquals(r, 3, r.trim().split("\n").length);
        assertTrue(r, r.contains("role=TRANSIT") && r.contains("role=RETURN") && r.contains("packets=7"));

        ChainRemoveCommand rm = new ChainRemoveCommand();
        rm.name = "web";
        assertEquals("chain web removed", run(rm).trim());
        assertTrue(w.manager.chains().isEmpty());
    }

    @Test
    public void serversPrintsTheRefusedServerNetcfgEntriesAfterTheServers() throws Exception {
        String none = run(new ServersCommand());
        assertFalse(none, none.contains("NETCFG REFUSED"));
        w.servers.refuse(new ServerConfigErrors.Refused(DeviceId.deviceId("metron:10.0.0.7:50051"), "nics.eth0",
                "not a connect point: s9", Instant.parse("2026-11-28T10:00:00Z")));
        String s = run(new ServersCommand());
        assertTrue(s, s.contains("id=metron:server0 agent=10.0.0.1:50051 load="));
        assertTrue(s, s.endsWith("id=metron:10.0.0.7:50051 NETCFG REFUSED metron.nics.eth0: not a connect point: s9 "
                + "(refused at 2026-11-28T10:00:00Z)\n"));
    }

    @Test
    public void errorsArePrintedNotThrown() throws Exception {
        ChainAddCommand bad = new ChainAddCommand();
        bad.file = file("bad.json", "{\"name\": ").getPath();
        String b = run(bad);
        assertTrue(b, b.startsWith("INVALID_JSON: invalid JSON at line 1"));

        ChainAddCommand missing = new ChainAddCommand();
        missing.file = tmp.getRoot() + "/nope.json";
        assertTrue(run(missing).startsWith("cannot read " + missing.file));

        ChainRemoveCommand rm = new ChainRemoveCommand();
        rm.name = "ghost";
        assertEquals("UNKNOWN_CHAIN: no chain named 'ghost'", run(rm).trim());

        w.agents.forEach(a -> a.unreachable(true));
        String srv = run(new ServersCommand());
        assertTrue(srv, srv.contains("id=metron:server0 agent=10.0.0.1:50051 UNREACHABLE"));

        ChainAddCommand add = new ChainAddCommand();
        add.file = file("x.json", Fixtures.chainJson("x")).getPath();
        assertTrue(run(add).startsWith("AGENT_FAILURE: chain x"));
        assertEquals(ChainState.FAILED, w.manager.chain(ChainId.of("x")).get().state());
        assertFalse(run(new ChainsCommand()).isEmpty());
    }
}
