package org.metron.embedded;

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
import org.metron.embedded.topology.EmulatedNetwork;
import org.metron.embedded.web.Credentials;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.junit.Assert.assertEquals;
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
    private static EmulatedNetwork net;
    private static EmbeddedHost host;
    private static HostOptions options;
    private static String admin;

    @BeforeClass
    public static void up() throws Exception {
        Assume.assumeTrue("needs root and OVS", EmulatedNetwork.available());
        int ofPort = EmulatedNetwork.freePort();
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

    @Test
    public void dashboardRendersInHeadlessChromium() throws Exception {
        Path profile = TMP.newFolder().toPath();
        String url = host.dashboardUrl().replace("http://", "http://" + admin + "@");
        Process p = new ProcessBuilder("chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--user-data-dir=" + profile, "--dump-dom", url)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue("chromium did not finish", p.waitFor(60, TimeUnit.SECONDS));
        String dom = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        for (String table : List.of("chains", "classes", "tags", "placements", "load", "counters")) {
            assertThat(dom, containsString("<table id=\"" + table + "\">"));
        }
        assertThat(dom, containsString("metron:srv1"));
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
