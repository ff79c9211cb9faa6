package org.metron.drivers.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The netcfg of a Metron server: what it accepts, and refusals that name the device and the fault. */
public class MetronServerConfigTest {

    private static MetronServerConfig config(String device, String json) throws IOException {
        return config(device, json, MetronServerConfig.Verdicts.NONE);
    }

    private static MetronServerConfig config(String device, String json, MetronServerConfig.Verdicts verdicts)
            throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        MetronServerConfig c = new MetronServerConfig(verdicts);
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

    /** What ONOS refuses (isValid false, 207, nothing logged by ONOS) is listed by device and field until fixed. */
    @Test
    public void refusalsAreListedByDeviceAndFieldUntilAccepted() throws IOException {
        RefusedServerConfigs refused = new RefusedServerConfigs();
        assertFalse(config("metron:10.0.0.2:50051", "{\"deadlineMs\": \"soon\"}", refused).isValid());
        assertFalse(config("metron:10.0.0.3:50051", "{\"nics\": {\"eth1\": \"sw\"}}", refused).isValid());
        assertFalse(config("metron:10.0.0.4:50051", "{\"tls\": true}", refused).isValid());
        assertFalse(config("metron:10.0.0.5:50051", "{\"certChain\": \"/nonexistent/c.pem\"}", refused).isValid());
        assertEquals(List.of("metron:10.0.0.2:50051 deadlineMs", "metron:10.0.0.3:50051 nics.eth1",
                             "metron:10.0.0.4:50051 tls", "metron:10.0.0.5:50051 certChain"),
                     refused.refused().stream().map(r -> r.device() + " " + r.field())
                             .collect(Collectors.toList()));
        assertTrue(refused.refused().get(0).reason().contains("deadlineMs must be a positive number"));
        assertTrue(config("metron:10.0.0.2:50051", "{\"deadlineMs\": 900}", refused).isValid());
        assertEquals("an accepted entry clears its device's refusal", 3, refused.refused().size());
    }
}
