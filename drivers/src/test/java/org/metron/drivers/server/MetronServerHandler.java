package org.metron.drivers.server;

import org.onosproject.net.DeviceId;
import org.onosproject.net.driver.Behaviour;
import org.onosproject.net.driver.DefaultDriverData;
import org.onosproject.net.driver.DefaultDriverProvider;
import org.onosproject.net.driver.Driver;
import org.onosproject.net.driver.DriverData;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.driver.XmlDriverLoader;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * A driver handler for one Metron server as ONOS would make it: the metron-server driver loaded from
 * metron-drivers.xml, with the {@link AgentClientService} as the one service the behaviours look up.
 */
public final class MetronServerHandler implements DriverHandler {

    private final Driver driver;
    private final DriverData data;
    private final AgentClientService agents;

    public MetronServerHandler(DeviceId device, AgentClientService agents) {
        this.driver = loadDriver();
        this.data = new DefaultDriverData(driver, device);
        this.agents = agents;
    }

    static Driver loadDriver() {
        try (InputStream xml = MetronDriversLoader.class.getResourceAsStream(MetronDriversLoader.DRIVERS_XML)) {
            DefaultDriverProvider p = new XmlDriverLoader(MetronServerHandler.class.getClassLoader(), null)
                    .loadDrivers(xml, null);
            return p.getDrivers().iterator().next();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Driver driver() {
        return driver;
    }

    @Override
    public DriverData data() {
        return data;
    }

    @Override
    public <T extends Behaviour> T behaviour(Class<T> behaviourClass) {
        return driver.createBehaviour(this, behaviourClass);
    }

    @Override
    public <T> T get(Class<T> serviceClass) {
        if (serviceClass == AgentClientService.class) {
            return serviceClass.cast(agents);
        }
        throw new IllegalArgumentException("no service " + serviceClass.getName() + " in this test");
    }
}
