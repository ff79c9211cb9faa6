package org.metron.embedded;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Tag;
import org.metron.agent.v1.TagType;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;
import org.metron.drivers.testing.AgentProcess;
import org.metron.embedded.topology.EmulatedNetwork;
import org.metron.embedded.web.Credentials;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThat;
import static org.junit.Assert.assertTrue;

/**
 * The embedded host against a real emulated network (paper-fig3: real OVS switches over OpenFlow, a real agent
 * over gRPC when built): REST with authentication and authorization, failure paths that must leave the
 * switches untouched, the dashboard in headless Chromium, and a host restart.
 */
public class EmbeddedHostTest {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static EmulatedNetwork net;
    private static EmbeddedHost host;
    private static HostOptions options;
    private static String admin;

    @BeforeClass
    public static void up() throws Exception {
        Assume.assumeTrue("needs root and OVS", EmulatedNetwork.available());
        int ofPort = AgentProcess.freePort();
        net = EmulatedNetwork.up("paper-fig3", ofPort, TMP.newFolder("run").toPath(), EmulatedNetwork.agentBuilt());
        Path data = TMP.newFolder("data").toPath();
        // A read-only user next to the generated admin.
        Credentials.loadOrCreate(data);
        Files.writeString(data.resolve(Credentials.FILE), "viewer = look,viewer\n",
                          java.nio.file.StandardOpenOption.APPEND);
        options = HostOptions.parse("--state", net.stateFile().toString(), "--data", data.toString(),
                                    "--openflow", "127.0.0.1:" + ofPort, "--http", "127.0.0.1:0");
        host = new EmbeddedHost(options);
        admin = Credentials.loadOrCreate(data).basic(Credentials.ADMIN);
    }

    @AfterClass
    public static void down() throws Exception {
        if (host != null) {
            host.close();
        }
        if (net != null) {
            net.close();
        }
    }

    static HttpResponse<String> call(String method, String path, String userPass, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(host.restUrl() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (userPass != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    userPass.getBytes(StandardCharsets.UTF_8)));
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String chain(String name, String fwClick) {
        return "{\"name\": \"" + name + "\", \"nfs\": [{\"name\": \"fw\", \"click\": \"" + fwClick + "\"}, "
                + "{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: "
                + "IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\"}], "
                + "\"links\": [{\"from\": \"fw.out0\", \"to\": \"napt.in0\"}], \"ingress\": [\"fw.in0\"], "
                + "\"egress\": [\"napt.out0\"], \"deployment\": {\"tagType\": \"mac\", \"cpuCores\": 1, "
                + "\"maxCpuCores\": 2, \"autoScale\": false, \"ingressPoint\": \"of:0000000000000001/1\", "
                + "\"egressPoint\": \"of:0000000000000002/1\", \"nics\": 1}}";
    }

    @Test
    public void restNeedsAuthenticationAndWritesNeedTheAdminRole() throws Exception {
        HttpResponse<String> anonymous = call("GET", "/chains", null, null);
        assertEquals(401, anonymous.statusCode());
        assertTrue(anonymous.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Basic"));
        assertEquals(401, call("GET", "/chains", "admin:wrong", null).statusCode());
        HttpResponse<String> viewer = call("GET", "/chains", "viewer:look", null);
        assertEquals(200, viewer.statusCode());
        assertThat(viewer.body(), containsString("\"chains\""));
        assertEquals(403, call("POST", "/chains", "viewer:look", chain("c", "x")).statusCode());
    }

    @Test
    public void serversAreTheTopologysAgentsQueriedOverGrpc() throws Exception {
        HttpResponse<String> r = call("GET", "/servers", admin, null);
        assertEquals(200, r.statusCode());
        assertThat(r.body(), containsString("\"id\":\"metron:srv1\""));
        assertThat(r.body(), containsString("\"agent\":\"" + net.node("srv1").get("agent").asText() + "\""));
        // no netcfg in this host: nothing is ever refused, the list is there and empty as the contract has it
        assertThat(r.body(), containsString("\"refusedConfigs\":[]"));
        if (EmulatedNetwork.agentBuilt()) {
            assertThat(r.body(), containsString("\"reachable\":true"));
            assertThat(r.body(), containsString("\"name\":\"eth1\",\"mac\":\"02:00:00:00:01:02\""));
        } else {
            assertThat(r.body(), containsString("\"reachable\":false"));
        }
    }

    @Test
    public void aBadChainIsRejectedNamingTheElementAndNothingIsInstalled() throws Exception {
        HttpResponse<String> r = call("POST", "/chains", admin,
                chain("bad", "FromDevice(in0) -> IPFilter(allow udp, deny all) -> ToDevice(out0);"));
        assertEquals(r.body(), 422, r.statusCode());
        assertThat(r.body(), containsString("nf 'fw', element 'IPFilter"));
        assertThat(call("GET", "/chains", admin, null).body(), not(containsString("\"bad\"")));
        assertThat(net.ofctl("s1", "dump-flows"), not(containsString("cookie=")));
    }

    @Test
    public void aChainTheAgentCannotRunIsRolledBackOffTheSwitches() throws Exception {
        Assume.assumeTrue("needs the agent", EmulatedNetwork.agentBuilt());
        // the agent is made to refuse the chain: a pipeline of the chain's name already runs on it, so its
        // DeployPipeline answers ALREADY_EXISTS after placement, while the switch rules are staged
        try (GrpcAgentClient agent = GrpcAgentClient.connect(AgentEndpoint.parse(
                net.node("srv1").get("agent").asText()))) {
            ServerResources res = agent.getResources().get(30, TimeUnit.SECONDS);
            int core = res.getCoresList().stream().filter(c -> c.getAvailable() && c.getPipelineId().isEmpty())
                    .findFirst().orElseThrow().getId();
            agent.deployPipeline(DeployPipelineRequest.newBuilder().setPipelineId("fwnapt")
                    .setIngressNic("eth0").addEgress(Egress.newBuilder().setNic("eth1"))
                    .addGroups(GroupSpec.newBuilder().setGroupId("squatter").setCore(core)
                            .setClickConfig("input -> [0]output;")
                            .setTag(Tag.newBuilder().setType(TagType.TAG_MAC).setValue(4000)))
                    .build()).get(30, TimeUnit.SECONDS);
            try {
                HttpResponse<String> r = call("POST", "/chains", admin, chain("fwnapt", "FromDevice(in0) -> "
                        + "Strip(14) -> CheckIPHeader -> IPFilter(allow udp dst port 5000, deny all) -> Unstrip(14) "
                        + "-> ToDevice(out0);"));
                assertEquals(r.body(), 502, r.statusCode());
                assertThat(r.body(), containsString("ALREADY_EXISTS"));
                assertThat(r.body(), containsString("rolled back"));
                assertThat(net.ofctl("s1", "dump-flows"), not(containsString("cookie=")));
                assertThat(net.ofctl("s2", "dump-flows"), not(containsString("cookie=")));
                assertThat("nothing of the chain stays placed", call("GET", "/placements", admin, null).body(),
                           not(containsString("fwnapt")));
            } finally {
                agent.removePipeline("fwnapt").get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Allows UDP to 5000 and TCP to 80, then NAPT: the allowed class has two entries. */
    static String twoEntryChain(String name) {
        return chain(name, "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow udp dst port 5000, "
                + "allow tcp dst port 80, deny all) -> Unstrip(14) -> ToDevice(out0);");
    }

    /** The page as headless Chromium leaves it after running its scripts for {@code ms} of virtual time. */
    static String dashboardDom(long ms) throws Exception {
        Path profile = TMP.newFolder().toPath();
        String url = host.dashboardUrl().replace("http://", "http://" + admin + "@");
        Process p = new ProcessBuilder("chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--user-data-dir=" + profile, "--virtual-time-budget=" + ms,
                "--dump-dom", url).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String dom = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue("chromium did not finish", p.waitFor(90, TimeUnit.SECONDS));
        return dom;
    }

    /** The rows of a dashboard table as cell texts. */
    static List<List<String>> rows(String dom, String table) {
        Matcher t = Pattern.compile("<table id=\"table-" + table + "\">(.*?)</table>", Pattern.DOTALL).matcher(dom);
        assertTrue("table " + table + " in " + dom, t.find());
        List<List<String>> out = new ArrayList<>();
        Matcher r = Pattern.compile("<tr>(.*?)</tr>", Pattern.DOTALL).matcher(t.group(1));
        while (r.find()) {
            List<String> cells = new ArrayList<>();
            Matcher c = Pattern.compile("<td[^>]*>(.*?)</td>", Pattern.DOTALL).matcher(r.group(1));
            while (c.find()) {
                cells.add(c.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"")
                        .replace("&amp;", "&"));
            }
            if (!cells.isEmpty()) {
                out.add(cells);
            }
        }
        return out;
    }

    static JsonNode get(String path) throws Exception {
        HttpResponse<String> r = call("GET", path, admin, null);
        assertEquals(path + ": " + r.body(), 200, r.statusCode());
        assertThat(path, r.body(), not(containsString("Optional[")));
        return MAPPER.readTree(r.body());
    }

    @Test
    public void dashboardRendersInHeadlessChromium() throws Exception {
        String dom = dashboardDom(5000);
        assertThat("the page polled and drew", dom, containsString("data-polls=\""));
        assertThat(dom, containsString("<div id=\"errors\" hidden=\"\""));
        for (String table : List.of("problem", "chain", "placement", "class", "tag", "core", "group", "scaling",
                "flowstate", "rule")) {
            assertThat(dom, containsString("<table id=\"table-" + table + "\">"));
        }
        assertThat("the topology's server", dom, containsString("data-id=\"metron:srv1\""));
        assertThat("and switches", dom, containsString("data-id=\"of:0000000000000001\""));
        assertThat(dom, not(containsString("Optional[")));
    }

    /**
     * What operators read, on real OVS and a real agent: a class of two filter entries reads as those entries in
     * order (each with what happens to its packets and the rules it became), never as their conjunction; no REST
     * answer and no dashboard value reads "Optional[...]"; the dashboard shows what REST reports.
     */
    @Test
    public void restAndDashboardShowAClassAsItsOrderedEntriesAndNoOptional() throws Exception {
        Assume.assumeTrue("needs the agent", EmulatedNetwork.agentBuilt());
        HttpResponse<String> submitted = call("POST", "/chains", admin, twoEntryChain("views"));
        try {
            assertEquals(submitted.body(), 201, submitted.statusCode());
            JsonNode classes = get("/chains/views/classes").get("classes");
            JsonNode allowed = null;
            for (JsonNode c : classes) {
                if (c.get("disposition").asText().equals("server")) {
                    allowed = c;
                }
                for (JsonNode e : c.get("entries")) {
                    String match = e.get("match").asText();
                    assertFalse("an entry is not a conjunction of entries: " + match,
                            match.contains("dst port 5000") && match.contains("dst port 80"));
                }
            }
            assertTrue(classes.toString(), allowed != null && allowed.get("entries").size() == 2);
            JsonNode first = allowed.get("entries").get(0);
            assertThat(first.get("match").asText(), containsString("dst port 5000"));
            assertThat(allowed.get("entries").get(1).get("match").asText(), containsString("dst port 80"));
            assertEquals("switch", first.get("classifiedAt").asText());
            assertThat(first.get("does").asText(), containsString("at the switch to group g0, core "));
            // the rule it became is the one installed on s1: its flow id is in the switch's table
            JsonNode rule = first.get("rules").get(0);
            // (ONOS's FlowRule JSON: deviceId, the flow id in decimal, criteria by ONOS's names)
            assertEquals("of:0000000000000001", rule.get("deviceId").asText());
            assertThat(rule.get("text").asText(), containsString("UDP_DST:5000"));
            assertThat(rule.get("selector").get("criteria").toString(), containsString("{\"type\":\"UDP_DST\",\"udpPort\":5000}"));
            assertThat(net.ofctl("s1", "dump-flows"), containsString("cookie=0x"
                    + Long.toHexString(Long.parseLong(rule.get("id").asText()))));

            for (String path : List.of("/chains", "/chains/views", "/classes", "/tags", "/placements", "/servers",
                    "/rules", "/scaling", "/scaling/views")) {
                get(path);
            }
            JsonNode placement = get("/placements").get("placements").get(0);
            JsonNode tags = get("/tags").get("tags");
            JsonNode servers = get("/servers").get("servers");

            String dom = dashboardDom(6000);
            assertThat(dom, not(containsString("Optional[")));
            assertThat(dom, containsString("<div id=\"errors\" hidden=\"\""));
            // the classes table: one row per REST entry, in order, with REST's own text
            List<List<String>> rows = rows(dom, "class");
            int at = 0;
            for (JsonNode c : classes) {
                for (JsonNode e : c.get("entries")) {
                    List<String> texts = new ArrayList<>();
                    e.get("rules").forEach(r -> texts.add(r.get("text").asText()));
                    assertEquals(List.of("views", c.get("id").asText(),
                            (e.get("index").asInt() + 1) + " of " + c.get("entries").size(), e.get("match").asText(),
                            e.get("classifiedAt").asText(), e.get("does").asText(), String.join("\n", texts)),
                            rows.get(at++));
                }
            }
            assertEquals(rows.toString(), at, rows.size());
            // where it runs and with which tags: the placement and tag tables, and the topology drawing
            assertThat(rows(dom, "placement").toString(), rows(dom, "placement").get(0).subList(0, 2),
                    org.hamcrest.Matchers.equalTo(List.of("views", placement.get("server").asText())));
            assertThat(rows(dom, "placement").get(0).get(3), org.hamcrest.Matchers.startsWith(
                    placement.get("offloadDevice").asText()));
            for (JsonNode t : tags) {
                assertTrue(t + " in " + rows(dom, "tag"), rows(dom, "tag").stream().anyMatch(r ->
                        r.get(0).equals(t.get("server").asText()) && r.get(1).equals(t.get("nic").asText())
                                && r.get(2).startsWith("mac " + t.get("mac").asText().substring(0, 11))
                                && r.get(3).equals("views") && r.get(4).equals(t.get("groupId").asText())));
            }
            assertThat(dom, containsString("data-chain=\"views\" data-server=\"" + placement.get("server").asText()
                    + "\" data-offload=\"" + placement.get("offloadDevice").asText() + "\""));
            // each core of each server as its agent reports it
            for (JsonNode s : servers) {
                for (JsonNode c : s.get("cores")) {
                    String use = c.get("chain").asText().isEmpty() ? c.get("available").asBoolean() ? "free"
                            : "reserved" : c.get("chain").asText();
                    assertTrue(c + " in " + rows(dom, "core"), rows(dom, "core").stream().anyMatch(r ->
                            r.get(0).equals(s.get("id").asText()) && r.get(1).equals(c.get("id").asText())
                                    && r.get(2).equals(use)));
                }
            }
            assertTrue(rows(dom, "chain").toString(), rows(dom, "chain").stream()
                    .anyMatch(r -> r.subList(0, 2).equals(List.of("views", "ACTIVE"))));
            // and the tables' own JSON reads no Optional either
            HttpResponse<String> tables = HTTP.send(HttpRequest.newBuilder(URI.create(host.dashboardUrl()
                    + "tables.json")).header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    admin.getBytes(StandardCharsets.UTF_8))).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, tables.statusCode());
            assertThat(tables.body(), not(containsString("Optional[")));
        } finally {
            assertEquals(204, call("DELETE", "/chains/views", admin, null).statusCode());
        }
    }

    @Test
    public void aRestartedHostGetsItsSwitchesBackAndServesAgain() throws Exception {
        host.close();
        long t0 = System.nanoTime();
        host = new EmbeddedHost(options);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("switches reconnect within the host's wait (" + ms + " ms)", ms < options.switchWaitMs);
        assertEquals(200, call("GET", "/chains", admin, null).statusCode());
        assertThat(net.ofctl("s1", "dump-flows"), not(containsString("cookie=")));
    }

    @Test
    public void dashboardRefusesAnonymousCallers() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(host.dashboardUrl())).build(),
                                           HttpResponse.BodyHandlers.ofString());
        assertEquals(401, r.statusCode());
    }
}
