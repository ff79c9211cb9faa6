package org.metron.drivers.provider;

import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.server.AgentClientService;
import org.onosproject.net.AnnotationKeys;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultAnnotations;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceDescriptionDiscovery;
import org.onosproject.net.device.DeviceHandshaker;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.link.DefaultLinkDescription;
import org.onosproject.net.link.LinkDescription;
import org.onosproject.net.link.LinkProviderService;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.slf4j.LoggerFactory.getLogger;

/**
 * The Metron servers declared in netcfg as ONOS devices: a server whose agent answers is a connected device with
 * one port per NIC (from the driver's {@link DeviceDescriptionDiscovery}) and a link each way between each NIC and
 * the switch port netcfg names; a server whose agent stops answering is disconnected (unavailable, its links
 * gone), which is what ONOS applications, Metron's own failure handling included, react to.
 * Plain class, everything through ONOS's provider services and the device's driver; the OSGi shell is
 * {@link MetronServerProvider}.
 */
public final class ServerDevices {

    /** What one server is declared as, and what was last reported for it. */
    private static final class Server {
        final AgentEndpoint endpoint;
        final Map<String, ConnectPoint> nics;
        final List<LinkDescription> links = new ArrayList<>();
        /** The device was reported connected (available) and not disconnected since. */
        boolean connected;
        /** Its ports and links were reported for this declaration. */
        boolean described;

        Server(AgentEndpoint endpoint, Map<String, ConnectPoint> nics) {
            this.endpoint = endpoint;
            this.nics = Map.copyOf(nics);
        }
    }

    private final Logger log = getLogger(getClass());
    private final DeviceProviderService devices;
    private final LinkProviderService links;
    private final AgentClientService agents;
    private final Function<DeviceId, DriverHandler> handlers;
    private final String driverName;
    private final Map<DeviceId, Server> servers = new ConcurrentHashMap<>();

    /**
     * @param handlers   the driver handler of a server device (ONOS's DriverService in ONOS)
     * @param driverName the driver the devices are annotated with, so ONOS binds it to them
     */
    public ServerDevices(DeviceProviderService devices, LinkProviderService links, AgentClientService agents,
                         Function<DeviceId, DriverHandler> handlers, String driverName) {
        this.devices = devices;
        this.links = links;
        this.agents = agents;
        this.handlers = handlers;
        this.driverName = driverName;
    }

    /** Declares (or re-declares) a server and probes it at once. */
    public void declare(DeviceId id, AgentEndpoint endpoint, Map<String, ConnectPoint> nics) {
        Server now = new Server(endpoint, nics);
        synchronized (this) {
            Server before = servers.put(id, now);
            if (before != null && !before.endpoint.equals(endpoint)) {
                disconnect(id, before);
            } else if (before != null) {
                vanish(before); // the NICs' switch ports may have changed: the next probe reports them anew
                now.connected = before.connected;
            }
            agents.setEndpoint(id, endpoint);
        }
        probe(id);
    }

    /** Forgets a server: its device is disconnected and its links vanish. */
    public synchronized void forget(DeviceId id) {
        Server s = servers.remove(id);
        if (s != null) {
            disconnect(id, s);
            agents.remove(id);
        }
    }

    /** The servers declared now. */
    public Set<DeviceId> declared() {
        return Set.copyOf(servers.keySet());
    }

    /** Whether the server's device is connected (its agent answered the last probe). */
    public boolean isConnected(DeviceId id) {
        Server s = servers.get(id);
        return s != null && s.connected;
    }

    /** Probes every declared server in turn. */
    public void probeAll() {
        for (DeviceId id : declared()) {
            try {
                probe(id);
            } catch (RuntimeException e) {
                log.warn("Probing {} failed: {}", id, e.toString());
            }
        }
    }

    /**
     * Asks the server's agent whether it serves (the driver's handshaker: one Health call within the endpoint's
     * deadline) and reports the change, if any: connected with its ports and links, or disconnected.
     */
    public void probe(DeviceId id) {
        Server s = servers.get(id);
        if (s == null) {
            return;
        }
        DriverHandler handler = handlers.apply(id);
        DeviceHandshaker handshaker = handler.behaviour(DeviceHandshaker.class);
        handshaker.connect();
        boolean up;
        try {
            up = handshaker.probeReachability().get(s.endpoint.deadline().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            up = false;
        }
        DeviceDescription description = null;
        List<PortDescription> ports = List.of();
        if (up && !s.described) {
            DeviceDescriptionDiscovery discovery = handler.behaviour(DeviceDescriptionDiscovery.class);
            description = discovery.discoverDeviceDetails();
            ports = discovery.discoverPortDetails();
            up = description != null;
        }
        synchronized (this) {
            if (servers.get(id) != s) {
                return; // re-declared or forgotten meanwhile: that call reports
            }
            if (up && !s.described) {
                connect(id, s, description, ports);
            } else if (!up && s.connected) {
                log.warn("Metron server {} is unreachable: device unavailable", id);
                disconnect(id, s);
            }
        }
    }

    private void connect(DeviceId id, Server s, DeviceDescription description, List<PortDescription> ports) {
        // the driver's annotations (cores, memory, ...) plus the driver name, so ONOS binds the driver to the device
        devices.deviceConnected(id, DefaultDeviceDescription.copyReplacingAnnotation(description,
                DefaultAnnotations.builder().putAll(description.annotations())
                        .set(AnnotationKeys.DRIVER, driverName).build()));
        devices.updatePorts(id, ports);
        for (PortDescription p : ports) {
            String nic = p.annotations().value(AnnotationKeys.PORT_NAME);
            ConnectPoint sw = nic == null ? null : s.nics.get(nic);
            if (sw == null) {
                continue;
            }
            ConnectPoint server = new ConnectPoint(id, p.portNumber());
            s.links.add(new DefaultLinkDescription(server, sw, Link.Type.DIRECT));
            s.links.add(new DefaultLinkDescription(sw, server, Link.Type.DIRECT));
        }
        s.links.forEach(links::linkDetected);
        s.connected = true;
        s.described = true;
        log.info("Metron server {} connected: {} ports, {} links", id, ports.size(), s.links.size());
    }

    private void disconnect(DeviceId id, Server s) {
        vanish(s);
        if (s.connected) {
            devices.deviceDisconnected(id);
        }
        s.connected = false;
        s.described = false;
    }

    private void vanish(Server s) {
        s.links.forEach(links::linkVanished);
        s.links.clear();
    }
}
