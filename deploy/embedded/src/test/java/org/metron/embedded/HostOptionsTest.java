package org.metron.embedded;

import org.junit.Test;

import java.nio.file.Paths;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

public class HostOptionsTest {
    @Test
    public void parsesEveryOptionAndDefaultsTheRest() {
        HostOptions o = HostOptions.parse("--state", "run/x/state.json", "--openflow", "127.0.0.1:7000");
        assertEquals(Paths.get("run/x/state.json"), o.state);
        assertEquals(7000, o.openflow.getPort());
        assertEquals(8181, o.http.getPort());
        assertEquals(Paths.get("run/host-data"), o.data);
        assertEquals(15_000, o.switchWaitMs);
        assertTrue(o.failoverGroups);
        assertEquals(0, o.rerouteDelayMs);
        HostOptions off = HostOptions.parse("--state", "s", "--failover-groups", "off", "--reroute-delay-ms", "8000");
        assertEquals(false, off.failoverGroups);
        assertEquals(8000, off.rerouteDelayMs);
    }

    @Test
    public void badOptionsAreNamed() {
        expect("--state is required", "--data", "d");
        expect("unknown option '--nope'", "--state", "s", "--nope", "1");
        expect("--http: 'localhost' is not HOST:PORT", "--state", "s", "--http", "localhost");
        expect("--switch-wait-ms: 'soon' is not a number", "--state", "s", "--switch-wait-ms", "soon");
        expect("option --state needs a value", "--state");
        expect("--failover-groups: 'yes' is neither on nor off", "--state", "s", "--failover-groups", "yes");
        expect("--reroute-delay-ms: 'later' is not a number", "--state", "s", "--reroute-delay-ms", "later");
        expect("--agent-tls-key missing: --agent-tls-trust, --agent-tls-cert and --agent-tls-key go together",
                "--state", "s", "--agent-tls-trust", "ca.pem", "--agent-tls-cert", "c.pem");
        expect("--agent-tls-*: trustCerts /nonexistent/ca.pem is not a readable file", "--state", "s",
                "--agent-tls-trust", "/nonexistent/ca.pem", "--agent-tls-cert", "c.pem", "--agent-tls-key", "k.pem");
    }

    private static void expect(String message, String... args) {
        try {
            HostOptions.parse(args);
            fail("accepted " + String.join(" ", args));
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage(), e.getMessage().startsWith(message));
        }
    }
}
