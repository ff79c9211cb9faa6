package org.metron.drivers.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The netcfg of a Metron server: what it accepts, and refusals that name the device and the fault. */
public class MetronServerConfigTest {

    private static MetronServerConfig config(String device, String json) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        MetronServerConfig c = new MetronServerConfig();
        c.init(DeviceId.deviceId(device), MetronServerConfig.KEY, mapper.readTree(json), mapper, null);
        return c;
    }

    @Test
    public void anEmptyEntryIsAPlainTextServerAtTheIdsAddress() throws IOException {
        MetronServerConfig c = config("metron:10.0.0.2:50051", "{}");
        assertTrue(c.isValid());
        assertEquals("10.0.0.2:50051", c.endpoint().target());
        assertFalse(c.endpoint().tls());
        assertTrue(c.nics().isEmpty());
    }

    @Test
    public void deadlineAndNicCabling() throws IOException {
        MetronServerConfig c = config("metron:10.0.0.2:50051",
                                      "{\"deadlineMs\": 800, \"nics\": {\"eth0\": \"of:0000000000000002/7\"}}");
        assertTrue(c.isValid());
        assertEquals(Duration.ofMillis(800), c.endpoint().deadline());
        assertEquals(AgentEndpoint.DEFAULT_BUILD_DEADLINE, c.endpoint().buildDeadline());
        assertEquals(Duration.ofMillis(60_000), config("metron:10.0.0.2:50051", "{\"buildDeadlineMs\": 60000}")
                .endpoint().buildDeadline());
        assertEquals(Map.of("eth0", ConnectPoint.deviceConnectPoint("of:0000000000000002/7")), c.nics());
    }

    @Test
    public void faultsAreNamed() throws IOException {
        assertFalse(config("of:0000000000000001", "{}").isValid());
        assertEquals("metron:10.0.0.2:50051: nics.eth0: 'switch1' is not a switch port (<device>/<port>)",
                     assertThrows(IllegalArgumentException.class,
                                  () -> config("metron:10.0.0.2:50051", "{\"nics\": {\"eth0\": \"switch1\"}}")
                                          .check()).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class,
                                () -> config("metron:10.0.0.2:50051", "{\"deadlineMs\": -1}").check())
                           .getMessage().contains("deadlineMs must be a positive number"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                                () -> config("metron:10.0.0.2:50051", "{\"buildDeadlineMs\": 0}").check())
                           .getMessage().contains("buildDeadlineMs must be a positive number"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                                () -> config("metron:10.0.0.2:50051", "{\"tls\": true}").check())
                           .getMessage().contains("takes only"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                                () -> config("metron:10.0.0.2:50051", "{\"trustCerts\": \"/nonexistent/ca.pem\"}")
                                        .check()).getMessage().contains("cannot read TLS file"));
    }
}
