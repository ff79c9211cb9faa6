package org.metron.drivers.agent;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class AgentEndpointTest {

    @Rule
    public TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void parsesHostPortAndIpv6() {
        AgentEndpoint e = AgentEndpoint.parse("10.0.0.2:50051");
        assertEquals("10.0.0.2", e.host());
        assertEquals(50051, e.port());
        assertEquals("10.0.0.2:50051", e.target());
        assertFalse(e.tls());
        assertEquals(AgentEndpoint.DEFAULT_DEADLINE, e.deadline());

        AgentEndpoint v6 = AgentEndpoint.parse("[::1]:7");
        assertEquals("::1", v6.host());
        assertEquals("[::1]:7", v6.target());
    }

    @Test
    public void rejectsBadAddressesNamingThem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                                                  () -> AgentEndpoint.parse("server1"));
        assertTrue(e.getMessage(), e.getMessage().contains("'server1'"));
        e = assertThrows(IllegalArgumentException.class, () -> AgentEndpoint.parse("h:http"));
        assertTrue(e.getMessage(), e.getMessage().contains("port is not a number"));
        e = assertThrows(IllegalArgumentException.class, () -> AgentEndpoint.of("h", 70000));
        assertTrue(e.getMessage(), e.getMessage().contains("70000"));
        e = assertThrows(IllegalArgumentException.class,
                         () -> AgentEndpoint.builder().host("h").port(1).deadline(Duration.ZERO).build());
        assertTrue(e.getMessage(), e.getMessage().contains("deadline"));
    }

    @Test
    public void tlsNeedsReadableFilesAndCompleteKeyPair() throws Exception {
        Path ca = tmp.newFile("ca.pem").toPath();
        Path cert = tmp.newFile("c.pem").toPath();
        Path missing = tmp.getRoot().toPath().resolve("nope.pem");
        Files.writeString(ca, "x");

        AgentEndpoint tls = AgentEndpoint.builder().host("h").port(1).trustCerts(ca).build();
        assertTrue(tls.tls());
        assertFalse(tls.certChain().isPresent());

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                AgentEndpoint.builder().host("h").port(1).trustCerts(ca).clientCertificate(cert, missing).build());
        assertTrue(e.getMessage(), e.getMessage().contains("nope.pem"));
        e = assertThrows(IllegalArgumentException.class, () ->
                AgentEndpoint.builder().host("h").port(1).clientCertificate(cert, cert).build());
        assertTrue(e.getMessage(), e.getMessage().contains("trustCerts"));
    }

    @Test
    public void valueSemantics() {
        AgentEndpoint a = AgentEndpoint.of("h", 1);
        assertEquals(a, AgentEndpoint.parse("h:1"));
        assertEquals(a.hashCode(), AgentEndpoint.parse("h:1").hashCode());
        assertNotEquals(a, a.toBuilder().deadline(Duration.ofSeconds(1)).build());
        assertEquals(a, a.toBuilder().build());
    }
}
