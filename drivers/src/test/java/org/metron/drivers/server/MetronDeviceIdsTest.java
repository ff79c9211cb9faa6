package org.metron.drivers.server;

import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.DeviceId;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class MetronDeviceIdsTest {

    @Test
    public void roundTrips() {
        AgentEndpoint e = AgentEndpoint.of("10.0.0.2", 50051);
        DeviceId id = MetronDeviceIds.deviceId(e);
        assertEquals("metron:10.0.0.2:50051", id.toString());
        assertTrue(MetronDeviceIds.isMetronServer(id));
        assertEquals(e, MetronDeviceIds.endpoint(id));
    }

    @Test
    public void rejectsOtherDevices() {
        DeviceId of = DeviceId.deviceId("of:0000000000000001");
        assertFalse(MetronDeviceIds.isMetronServer(of));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                                                  () -> MetronDeviceIds.endpoint(of));
        assertTrue(e.getMessage(), e.getMessage().contains("of:0000000000000001"));
    }
}
