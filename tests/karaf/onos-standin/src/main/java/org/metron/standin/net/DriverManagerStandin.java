package org.metron.standin.net;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import org.onlab.util.ItemNotFoundException;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.net.AnnotationKeys;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.config.basics.BasicDeviceConfig;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.Behaviour;
import org.onosproject.net.driver.DefaultDriverData;
import org.onosproject.net.driver.DefaultDriverHandler;
import org.onosproject.net.driver.DefaultDriverProvider;
import org.onosproject.net.driver.Driver;
import org.onosproject.net.driver.DriverAdminService;
import org.onosproject.net.driver.DriverEvent;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.driver.DriverListener;
import org.onosproject.net.driver.DriverProvider;
import org.onosproject.net.driver.DriverRegistry;
import org.onosproject.net.driver.DriverService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The driver subsystem (core-net's DriverRegistryManager + DriverManager, stand-in) with ONOS's semantics:
 * providers (AbstractDriverLoader's) register drivers, merged by name into onos-api's DefaultDriverProvider;
 * behaviour classes resolvable by name; a device's driver is the netcfg "basic" driver, else its "driver"
 * annotation, else the first driver whose manufacturer/hw/sw patterns match the device's (ERE, as ONOS: a
 * literal key first), else "default"; handlers are onos-api's DefaultDriverHandler over DefaultDriverData.
 * Not stood in for: merging a pipeconf's behaviours into a device's driver.
 */
@Component(immediate = true, service = {DriverService.class, DriverAdminService.class, DriverRegistry.class})
public class DriverManagerStandin extends AbstractListenerManager<DriverEvent, DriverListener>
        implements DriverService, DriverAdminService {
    private static final String DEFAULT = "default";
    private final DefaultDriverProvider merged = new DefaultDriverProvider();
    private final Set<DriverProvider> providers = ConcurrentHashMap.newKeySet();
    private final Map<String, Driver> byKey = new ConcurrentHashMap<>();
    private final Map<String, Class<? extends Behaviour>> classes = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigService netcfg;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(DriverEvent.class, listenerRegistry);
    }

    @Deactivate
    protected void deactivate() {
        dispatcher.removeSink(DriverEvent.class);
    }

    private static String key(String mfr, String hw, String sw) {
        return mfr + "-" + hw + "-" + sw;
    }

    // ------------------------------------------------------------------ DriverAdminService
    @Override
    public Set<DriverProvider> getProviders() {
        return ImmutableSet.copyOf(providers);
    }

    @Override
    public synchronized void registerProvider(DriverProvider provider) {
        for (Driver driver : provider.getDrivers()) {
            Driver d = merged.addDriver(driver);
            byKey.put(key(driver.manufacturer(), driver.hwVersion(), driver.swVersion()), d);
            for (Class<? extends Behaviour> b : d.behaviours()) {
                classes.put(b.getName(), b);
                classes.put(d.implementation(b).getName(), d.implementation(b));
            }
            post(new DriverEvent(DriverEvent.Type.DRIVER_ENHANCED, driver));
        }
        providers.add(provider);
    }

    @Override
    public synchronized void unregisterProvider(DriverProvider provider) {
        for (Driver driver : provider.getDrivers()) {
            merged.removeDriver(driver);
            byKey.remove(key(driver.manufacturer(), driver.hwVersion(), driver.swVersion()));
            post(new DriverEvent(DriverEvent.Type.DRIVER_REDUCED, driver));
        }
        providers.remove(provider);
    }

    @Override
    public Class<? extends Behaviour> getBehaviourClass(String className) {
        return classes.get(className);
    }

    // ------------------------------------------------------------------ DriverRegistry
    @Override
    public Set<Driver> getDrivers() {
        return merged.getDrivers();
    }

    @Override
    public Driver getDriver(String name) {
        return merged.getDrivers().stream().filter(d -> d.name().equals(name)).findFirst()
                .orElseThrow(() -> new ItemNotFoundException("Driver not found: " + name));
    }

    @Override
    public Driver getDriver(String mfr, String hw, String sw) {
        Driver literal = byKey.get(key(mfr, hw, sw));
        if (literal != null) {
            return literal;
        }
        // ONOS's rule: the device's strings must match the driver's as regular expressions
        return byKey.values().stream()
                .filter(d -> mfr.matches(d.manufacturer()) && hw.matches(d.hwVersion()) && sw.matches(d.swVersion()))
                .findFirst().orElseGet(() -> lookup(DEFAULT));
    }

    private Driver lookup(String name) {
        return name == null ? null
                : merged.getDrivers().stream().filter(d -> d.name().equals(name)).findFirst().orElse(null);
    }

    // ------------------------------------------------------------------ DriverService
    @Override
    public Set<Driver> getDrivers(Class<? extends Behaviour> withBehaviour) {
        return merged.getDrivers().stream().filter(d -> d.hasBehaviour(withBehaviour))
                .collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public Driver getDriver(DeviceId deviceId) {
        BasicDeviceConfig cfg = netcfg.getConfig(deviceId, BasicDeviceConfig.class);
        Driver driver = lookup(cfg == null ? null : cfg.driver());
        if (driver != null) {
            return driver;
        }
        Device device = deviceService.getDevice(deviceId);
        if (device == null) {
            throw new ItemNotFoundException("Device not found: " + deviceId);
        }
        driver = lookup(device.annotations().value(AnnotationKeys.DRIVER));
        if (driver != null) {
            return driver;
        }
        driver = getDriver(device.manufacturer(), device.hwVersion(), device.swVersion());
        if (driver == null) {
            throw new ItemNotFoundException("Driver not found for " + deviceId);
        }
        return driver;
    }

    @Override
    public Map<DeviceId, String> getDeviceDrivers() {
        ImmutableMap.Builder<DeviceId, String> b = ImmutableMap.builder();
        for (Device d : deviceService.getDevices()) {
            try {
                b.put(d.id(), getDriver(d.id()).name());
            } catch (ItemNotFoundException e) {
                // a device without a driver is left out, as ONOS does
            }
        }
        return b.build();
    }

    @Override
    public DriverHandler createHandler(DeviceId deviceId, String... credentials) {
        return new DefaultDriverHandler(new DefaultDriverData(getDriver(deviceId), deviceId));
    }
}
