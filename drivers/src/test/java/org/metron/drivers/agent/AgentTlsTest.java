package org.metron.drivers.agent;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.drivers.testing.AgentProcess;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Mutual TLS against a real agent started with --tls-*; certificates made by openssl for this run. */
public class AgentTlsTest {

    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static Path dir;
    private static AgentProcess agent;

    private static void sh(String cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sh", "-c", cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(cmd + " failed: " + out);
        }
    }

    private static void ca(String name) throws Exception {
        sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=" + name
                   + " -keyout " + name + ".key -out " + name + ".pem");
    }

    private static void cert(String name, String ca, String ext) throws Exception {
        Files.writeString(dir.resolve(name + ".ext"), ext + "\n");
        sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=" + name
                   + " -keyout " + name + ".key -out " + name + ".csr");
        sh("openssl x509 -req -days 1 -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca + ".key -CAcreateserial"
                   + " -extfile " + name + ".ext -out " + name + ".pem");
    }

    @BeforeClass
    public static void startTlsAgent() throws Exception {
        dir = TMP.getRoot().toPath();
        ca("ca");
        ca("otherca");
        cert("agent", "ca", "subjectAltName=IP:127.0.0.1");
        cert("controller", "ca", "extendedKeyUsage=clientAuth");
        cert("intruder", "otherca", "extendedKeyUsage=clientAuth");
        agent = AgentProcess.start(new AgentProcess.Options()
                                           .tls(dir.resolve("agent.pem"), dir.resolve("agent.key"), dir.resolve("ca.pem")));
    }

    @AfterClass
    public static void stopAgent() throws Exception {
        if (agent != null) {
            agent.close();
        }
    }

    private static AgentEndpoint.Builder endpoint() {
        return AgentEndpoint.builder().host("127.0.0.1").port(agent.port()).deadline(Duration.ofSeconds(5));
    }

    /**
     * The call is refused at the TLS layer. The code depends on who aborts the handshake: the client
     * (UNAVAILABLE) or, with TLS 1.3, the agent after the client already finished it (UNKNOWN).
     */
    private static void refused(String why, AgentEndpoint ep) {
        try (GrpcAgentClient c = GrpcAgentClient.connect(ep)) {
            CompletionException e = assertThrows(why, CompletionException.class, () -> c.health().join());
            AgentException a = (AgentException) e.getCause();
            assertTrue(why + ": " + a.getMessage(),
                       a.code() == AgentException.Code.UNAVAILABLE || a.code() == AgentException.Code.UNKNOWN);
            assertTrue(a.getMessage(), a.getMessage().startsWith("agent " + ep.target() + ": Health: "));
        }
    }

    @Test
    public void controllerWithClientCertificateIsServed() throws Exception {
        AgentEndpoint ep = endpoint().deadline(AgentProcess.CALL_DEADLINE).trustCerts(dir.resolve("ca.pem"))
                .clientCertificate(dir.resolve("controller.pem"), dir.resolve("controller.key")).build();
        try (GrpcAgentClient c = GrpcAgentClient.connect(ep)) {
            assertTrue(c.health().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS).getServing());
            assertTrue(c.getResources().get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS).getCoresCount() >= 1);
        }
    }

    @Test
    public void clientsWithoutAValidCertificateAreRefused() {
        refused("no client certificate", endpoint().trustCerts(dir.resolve("ca.pem")).build());
        refused("client certificate from another CA", endpoint().trustCerts(dir.resolve("ca.pem"))
                .clientCertificate(dir.resolve("intruder.pem"), dir.resolve("intruder.key")).build());
        refused("plaintext", endpoint().build());
        refused("agent not signed by the trusted CA", endpoint().trustCerts(dir.resolve("otherca.pem"))
                .clientCertificate(dir.resolve("controller.pem"), dir.resolve("controller.key")).build());
    }
}
