package org.metron.embedded.contract;

import org.metron.drivers.server.AgentClientService;
import org.metron.standin.ClusterStandin;
import org.metron.standin.EventDispatcher;
import org.metron.standin.MastershipStandin;
import org.metron.standin.cluster.AtomixNode;
import org.metron.standin.net.DeviceManagerStandin;
import org.metron.standin.net.DriverManagerStandin;
import org.metron.standin.net.LinkManagerStandin;
import org.metron.standin.net.NetworkConfigStandin;
import org.onlab.osgi.ServiceDirectory;
import org.onlab.packet.ChassisId;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.driver.DefaultDriverHandler;
import org.onosproject.net.provider.ProviderId;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/**
 * ONOS's core services of one node as tests/karaf/onos-standin stands them in (ONOS's own are not on Maven
 * Central), wired as SCR would: {@link #set} binds a component's {@code @Reference} field, {@link #start} activates
 * it, {@link #stop} deactivates what was started in reverse order. Events go out on the dispatcher's own thread, as
 * ONOS's do.
 */
final class StandinNode {
    /** The providers' id: ONOS picks a device's flow and link provider by it. */
    static final ProviderId PROVIDER = new ProviderId("of", "org.metron.test");
    final AtomixNode noCluster = new AtomixNode();
    final EventDispatcher events = new EventDispatcher();
    final ClusterStandin cluster = new ClusterStandin();
    private final List<Object> started = new ArrayList<>();
    private MastershipStandin mastership;
    private NetworkConfigStandin netcfg;
    private DeviceManagerStandin devices;
    private LinkManagerStandin links;
    private DriverManagerStandin drivers;

    StandinNode() {
        set(cluster, "dispatcher", events);
        set(cluster, "atomixNode", noCluster);
        start(cluster);
    }

    /** The device subsystem (mastership, netcfg, devices), started on first use. */
    DeviceManagerStandin devices() {
        if (devices == null) {
            mastership = new MastershipStandin();
            set(mastership, "dispatcher", events);
            set(mastership, "atomixNode", noCluster);
            start(mastership);
            netcfg = new NetworkConfigStandin();
            set(netcfg, "dispatcher", events);
            set(netcfg, "atomixNode", noCluster);
            start(netcfg);
            devices = new DeviceManagerStandin();
            set(devices, "dispatcher", events);
            set(devices, "netcfg", netcfg);
            set(devices, "mastership", mastership);
            set(devices, "cluster", cluster);
            set(devices, "atomixNode", noCluster);
            start(devices);
        }
        return devices;
    }

    /** The link subsystem over {@link #devices()}, started on first use. */
    LinkManagerStandin links() {
        if (links == null) {
            links = new LinkManagerStandin();
            set(links, "dispatcher", events);
            set(links, "deviceService", devices());
            set(links, "atomixNode", noCluster);
            start(links);
        }
        return links;
    }

    /** The driver subsystem over {@link #devices()} and netcfg, started on first use. */
    DriverManagerStandin drivers() {
        if (drivers == null) {
            drivers = new DriverManagerStandin();
            set(drivers, "dispatcher", events);
            set(drivers, "deviceService", devices());
            set(drivers, "netcfg", netcfg());
            start(drivers);
        }
        return drivers;
    }

    MastershipStandin mastership() {
        devices();
        return mastership;
    }

    NetworkConfigStandin netcfg() {
        devices();
        return netcfg;
    }

    /**
     * Connects devices through a device provider that can always reach them (as ONOS's OpenFlow provider, or the
     * drivers' server provider for {@code metron:} ids): available, and each switch mastered by this node (fails if
     * one is not).
     */
    void connect(DeviceId... ids) {
        DeviceProviderService reported = devices().register(new Reachable());
        for (DeviceId d : ids) {
            boolean server = "metron".equals(d.uri().getScheme());
            reported.deviceConnected(d, new DefaultDeviceDescription(d.uri(), server ? Device.Type.SERVER
                    : Device.Type.SWITCH, "Nicira, Inc.", "Open vSwitch", "3.1.0", "none", new ChassisId(1)));
            if (!server && mastership.getMasterFor(d) == null) {
                throw new AssertionError(d + " has no master");
            }
        }
    }

    /**
     * Points ONOS's driver handlers at the drivers' agent clients, the one OSGi service their behaviours get (in ONOS
     * from the service registry, through {@link DefaultDriverHandler}'s service directory); answers the directory it
     * replaced, for {@link #serviceDirectory} to put back.
     */
    static ServiceDirectory driverServices(AgentClientService agents) throws ReflectiveOperationException {
        return serviceDirectory(new ServiceDirectory() {
            @Override
            public <T> T get(Class<T> serviceClass) {
                if (serviceClass == AgentClientService.class) {
                    return serviceClass.cast(agents);
                }
                throw new org.onlab.osgi.ServiceNotFoundException(serviceClass.getName() + " not stood in");
            }
        });
    }

    /** Sets ONOS's driver handlers' service directory (one for the JVM), answering the one it replaced. */
    static ServiceDirectory serviceDirectory(ServiceDirectory dir) throws ReflectiveOperationException {
        Field f = DefaultDriverHandler.class.getDeclaredField("serviceDirectory");
        f.setAccessible(true);
        ServiceDirectory before = (ServiceDirectory) f.get(null);
        f.set(null, dir);
        return before;
    }

    /** Binds {@code component}'s reference field {@code field} (as SCR injects it). */
    static void set(Object component, String field, Object service) {
        OnosStoreContractTest.set(component, field, service);
    }

    /** Activates a component whose references are bound. */
    <T> T start(T component) {
        call(component, "activate");
        started.add(0, component);
        return component;
    }

    /** Deactivates what was started, last first (a component without deactivate has nothing to stop). */
    void stop() {
        for (Object c : started) {
            if (lifecycle(c, "deactivate") != null) {
                call(c, "deactivate");
            }
        }
        call(events, "deactivate");
    }

    /** The component's SCR lifecycle method, its own or inherited (ONOS's AbstractDriverLoader's); null if none. */
    private static java.lang.reflect.Method lifecycle(Object component, String method) {
        for (Class<?> c = component.getClass(); c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredMethod(method);
            } catch (NoSuchMethodException e) {
                // look further up
            }
        }
        return null;
    }

    /** An SCR lifecycle method (protected, as ONOS writes them). */
    private static void call(Object component, String method) {
        java.lang.reflect.Method m = lifecycle(component, method);
        if (m == null) {
            throw new AssertionError(component.getClass().getName() + " has no " + method);
        }
        try {
            m.setAccessible(true);
            m.invoke(component);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(method + " of " + component.getClass().getName(), e);
        }
    }

    /** A device provider that reaches every device it reports. */
    private static final class Reachable implements DeviceProvider {
        @Override
        public ProviderId id() {
            return PROVIDER;
        }

        @Override
        public void triggerProbe(DeviceId deviceId) {
        }

        @Override
        public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
        }

        @Override
        public boolean isReachable(DeviceId deviceId) {
            return true;
        }

        @Override
        public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
        }
    }
}
