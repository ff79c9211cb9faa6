package org.metron.drivers.server;

import org.junit.Before;
import org.junit.Test;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.behaviour.DeviceSystemStatisticsQuery;
import org.onosproject.net.device.DeviceDescriptionDiscovery;
import org.onosproject.net.device.DeviceHandshaker;
import org.onosproject.net.device.PortStatisticsDiscovery;
import org.onosproject.net.driver.AbstractDriverLoaderTest;
import org.onosproject.net.driver.Behaviour;
import org.onosproject.net.driver.DefaultDriverData;
import org.onosproject.net.driver.DefaultDriverProvider;
import org.onosproject.net.driver.Driver;
import org.onosproject.net.driver.XmlDriverLoader;
import org.onosproject.net.flow.FlowRuleProgrammable;

import java.io.InputStream;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/** The loader registers metron-drivers.xml, and every behaviour it names resolves and instantiates. */
public class MetronDriversLoaderTest extends AbstractDriverLoaderTest {

    private static final Map<Class<? extends Behaviour>, Class<?>> EXPECTED = Map.of(
            DeviceHandshaker.class, MetronServerHandshaker.class,
            DeviceDescriptionDiscovery.class, MetronServerDeviceDescription.class,
            PortStatisticsDiscovery.class, MetronServerPortStatistics.class,
            CpuLoadDiscovery.class, MetronServerCpuLoad.class,
            DeviceSystemStatisticsQuery.class, MetronServerCpuLoad.class,
            FlowRuleProgrammable.class, MetronNicFlowRuleProgrammable.class,
            ServicePipelineProgrammable.class, MetronServerPipelines.class,
            AgentAccess.class, MetronServerAgentAccess.class);

    @Before
    public void setUp() {
        loader = new MetronDriversLoader();
    }

    @Test
    public void metronServerDriverMapsEveryBehaviour() throws Exception {
        DefaultDriverProvider provider;
        try (InputStream xml = MetronDriversLoader.class.getResourceAsStream(MetronDriversLoader.DRIVERS_XML)) {
            assertNotNull("metron-drivers.xml is on the classpath", xml);
            provider = new XmlDriverLoader(getClass().getClassLoader(), null).loadDrivers(xml, null);
        }
        assertEquals(1, provider.getDrivers().size());
        Driver driver = provider.getDrivers().iterator().next();
        assertEquals("metron-server", driver.name());
        assertEquals(EXPECTED.keySet(), driver.behaviours());
        DefaultDriverData data = new DefaultDriverData(
                driver, MetronDeviceIds.deviceId(AgentEndpoint.of("10.0.0.2", 50051)));
        for (Map.Entry<Class<? extends Behaviour>, Class<?>> e : EXPECTED.entrySet()) {
            assertEquals(e.getKey().getName(), e.getValue(), driver.implementation(e.getKey()));
            Behaviour b = driver.createBehaviour(data, e.getKey());
            assertTrue(e.getKey().isInstance(b));
        }
    }
}
