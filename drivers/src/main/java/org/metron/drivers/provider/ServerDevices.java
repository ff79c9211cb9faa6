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
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import static org.slf4j.LoggerFactory.getLogger;

/**
 * The Metron servers declared in netcfg as ONOS devices: a server whose agent answers is a connected device with
 * one port per NIC (from the driver's {@link DeviceDescriptionDiscovery}) and a link each way between each NIC and
 * the switch port netcfg names; a server whose agent stops answering is disconnected (unavailable, its links
 * gone), which is what ONOS applications, Metron's own failure handling included, react to.
 * <p>
 * As ONOS's DeviceManager wants of a provider: a server counts as reachable ({@link #isConnected}) whenever this
 * node's own ping finds its agent serving, before its device is announced and on a node that never announced it,
 * because ONOS asks {@code isReachable} right after granting mastership on
 * {@code deviceConnected} and gives the role up if the answer is no (the device then has no master, its ports are
 * dropped and ONOS's flow service fails for it). Once a device has a master only that node probes its agent; a
 * device with no master is probed by every node, as any of them may connect it, and announced again if its
 * agent answers. Liveness: the agent's channel tells of a reset connection at once (a killed agent's kernel resets
 * it), which triggers a probe; a periodic probe finds a returning agent.
 * Plain class, everything through ONOS's provider services and the device's driver; the OSGi shell is
 * {@link MetronServerProvider}.
 */
public final class ServerDevices {

    /** A device without a master is announced again at most this often (ONOS may refuse it a role meanwhile). */
    static final long REANNOUNCE_MS = 2000;

    /** Who masters a device, as ONOS's MastershipService tells. */
    public interface Mastership {
        /** This node is alone: it masters whatever it connects (unit tests, a provider without a cluster). */
        Mastership ALONE = new Mastership() {
            @Override
            public boolean hasMaster(DeviceId id) {
                return true;
            }

            @Override
            public boolean isLocalMaster(DeviceId id) {
                return true;
            }
        };

        boolean hasMaster(DeviceId id);

        boolean isLocalMaster(DeviceId id);
    }

    /** What one server is declared as, and what was last reported for it. */
    private static final class Server {
        final AgentEndpoint endpoint;
        final Map<String, ConnectPoint> nics;
        final List<LinkDescription> links = new ArrayList<>();
        /** The device was reported connected (available) and not disconnected since (what this node announced). */
        volatile boolean connected;
        /** Its ports and links were reported for this declaration. */
        boolean described;
        /** When its device was last announced (deviceConnected). */
        long announced;
        /** Whether its channel was connected at the last connectivity change (a change of it triggers a probe). */
        volatile boolean channelReady;
        /** A triggered probe is queued: more changes meanwhile need no other. */
        final AtomicBoolean probeQueued = new AtomicBoolean();
        /** This node's last ping of the agent and its answer (null: never pinged). */
        volatile Answer answer;

        Server(AgentEndpoint endpoint, Map<String, ConnectPoint> nics) {
            this.endpoint = endpoint;
            this.nics = Map.copyOf(nics);
        }
    }

    /** One ping's answer: whether the agent served, and when (nanoTime). */
    private static final class Answer {
        final boolean serving;
        final long at;

        Answer(boolean serving, long at) {
            this.serving = serving;
            this.at = at;
        }
    }

    /** How long {@link #isConnected} waits for a ping of its own when it has no fresh answer. */
    static final long REACH_MS = 500;

    private final Logger log = getLogger(getClass());
    private final DeviceProviderService devices;
    private final LinkProviderService links;
    private final AgentClientService agents;
    private final Function<DeviceId, DriverHandler> handlers;
    private final String driverName;
    private final Mastership mastership;
    private final Map<DeviceId, Server> servers = new ConcurrentHashMap<>();
    /** Where triggered probes run, once {@link #startProbing} is called (never on the gRPC thread that tells). */
    private volatile Executor prober;
    /** How long this node's own last ping answers for the agent: two probe periods. */
    private volatile long pingFreshNanos = TimeUnit.MILLISECONDS.toNanos(2 * MetronServerProvider.DEFAULT_PROBE_MS);

    /** A node alone ({@link Mastership#ALONE}). */
    public ServerDevices(DeviceProviderService devices, LinkProviderService links, AgentClientService agents,
                         Function<DeviceId, DriverHandler> handlers, String driverName) {
        this(devices, links, agents, handlers, driverName, Mastership.ALONE);
    }

    /**
     * @param handlers   the driver handler of a server device (ONOS's DriverService in ONOS)
     * @param driverName the driver the devices are annotated with, so ONOS binds it to them
     * @param mastership who masters the devices: only a device's master probes it
     */
    public ServerDevices(DeviceProviderService devices, LinkProviderService links, AgentClientService agents,
                         Function<DeviceId, DriverHandler> handlers, String driverName, Mastership mastership) {
        this.devices = devices;
        this.links = links;
        this.agents = agents;
        this.handlers = handlers;
        this.driverName = driverName;
        this.mastership = mastership;
    }

    /**
     * Starts watching liveness: every {@code periodMs} the servers this node probes are probed, and a change of a
     * server's channel (connected or not) probes it at once; probes run on {@code executor}, one at a time.
     */
    public void startProbing(ScheduledExecutorService executor, long periodMs) {
        prober = executor;
        pingFreshNanos = TimeUnit.MILLISECONDS.toNanos(2 * periodMs);
        executor.scheduleWithFixedDelay(this::probeAll, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    private void channelChanged(DeviceId id, boolean ready) {
        Server s = servers.get(id);
        if (s == null || s.channelReady == ready) {
            return; // reconnect attempts of a dead agent (connecting, failing) need no probe each
        }
        s.channelReady = ready;
        Executor prober = this.prober;
        if (prober != null && s.probeQueued.compareAndSet(false, true)) {
            try {
                prober.execute(() -> {
                    s.probeQueued.set(false);
                    probe(id);
                });
            } catch (RejectedExecutionException e) {
                s.probeQueued.set(false); // shutting down
            }
        }
    }

    /**
     * Declares (or re-declares) a server and probes it at once. The declaration stands whatever that probe meets:
     * a probe that fails (at start-up the metron-server driver may not be registered yet: SCR starts the drivers
     * bundle's loader and this provider in either order) is logged and left to the periodic probe, and never
     * reaches the caller, which may have other servers to declare (a restarted cluster node whose start-up loop
     * ended at its first server's "Driver not found" never declared the second: it answered isReachable no for a
     * live server and never announced it).
     */
    public void declare(DeviceId id, AgentEndpoint endpoint, Map<String, ConnectPoint> nics) {
        Server now = new Server(endpoint, nics);
        synchronized (this) {
            Server before = servers.put(id, now);
            if (before != null && !before.endpoint.equals(endpoint)) {
                disconnect(id, before);
            } else if (before != null) {
                vanish(before); // the NICs' switch ports may have changed: the next probe reports them anew
                now.connected = before.connected;
                now.answer = before.answer;
            }
            agents.setEndpoint(id, endpoint);
            agents.watchConnectivity(id, ready -> channelChanged(id, ready));
        }
        probeLogged(id);
    }

    /** Forgets a server: its device is disconnected and its links vanish. */
    public synchronized void forget(DeviceId id) {
        Server s = servers.remove(id);
        if (s != null) {
            disconnect(id, s);
            agents.watchConnectivity(id, null);
            agents.remove(id);
        }
    }

    /** The servers declared now. */
    public Set<DeviceId> declared() {
        return Set.copyOf(servers.keySet());
    }

    /**
     * Whether this node reaches the server's agent now (ONOS's {@code isReachable}): this node's own last ping, if
     * it is at most two probe periods old, else a ping now (at most {@link #REACH_MS}). Independent of any role and
     * of what this node announced, as ONOS 2.7's GeneralDeviceProvider answers from the device's own client:
     * <ul>
     * <li>not from an announcement: a node that had not announced the device (only a master probes) answered no
     * when a killed node's mastership came to it, gave the role up, and the live server's device went unavailable,
     * so Metron moved chains off it (3-node cluster test); a node whose announcement was stale answered yes for a
     * dead agent, and ONOS marked its device available again (a flap of ~0.2 s per node the role passed through);
     * <li>not from the gRPC channel's state: a stopped agent's connection stays READY.
     * </ul>
     */
    public boolean isConnected(DeviceId id) {
        Server s = servers.get(id);
        if (s == null) {
            return false;
        }
        Answer a = s.answer;
        if (a != null && System.nanoTime() - a.at <= pingFreshNanos) {
            return a.serving;
        }
        return ping(id, s, REACH_MS);
    }

    /** Pings the agent, waits at most waitMs, and keeps the answer as this node's latest. */
    private boolean ping(DeviceId id, Server s, long waitMs) {
        boolean up;
        try {
            up = agents.ping(id).get(waitMs, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            up = false;
        }
        s.answer = new Answer(up, System.nanoTime());
        return up;
    }

    /** Whether this node probes the device: it masters it, or nobody does (any node may connect it). */
    public boolean probesHere(DeviceId id) {
        return !mastership.hasMaster(id) || mastership.isLocalMaster(id);
    }

    /** Probes every declared server this node probes, in turn. */
    public void probeAll() {
        declared().forEach(this::probeLogged);
    }

    /** {@link #probe}, a failure logged (the server stays declared: the next period probes it again). */
    private void probeLogged(DeviceId id) {
        try {
            probe(id);
        } catch (RuntimeException e) {
            log.warn("Probing {} failed: {}", id, e.toString());
        }
    }

    /**
     * Asks the server's agent whether it serves (one Health call, not retried: see
     * {@link AgentClientService#ping}) and reports the change, if any: connected with its ports and links, or
     * disconnected. A device another node masters is left to it; one with no master whose agent serves is
     * announced again, so that ONOS gives it a master at once.
     */
    public void probe(DeviceId id) {
        Server s = servers.get(id);
        if (s == null || (s.described && !probesHere(id))) {
            return;
        }
        DriverHandler handler = handlers.apply(id);
        handler.behaviour(DeviceHandshaker.class).connect();
        boolean up = ping(id, s, s.endpoint.deadline().toMillis() * 2);
        boolean reannounce = up && s.described && !mastership.hasMaster(id)
                && System.currentTimeMillis() - s.announced >= REANNOUNCE_MS;
        DeviceDescription description = null;
        List<PortDescription> ports = List.of();
        if (up && (!s.described || reannounce)) {
            DeviceDescriptionDiscovery discovery = handler.behaviour(DeviceDescriptionDiscovery.class);
            description = discovery.discoverDeviceDetails();
            ports = discovery.discoverPortDetails();
            up = description != null;
        }
        synchronized (this) {
            if (servers.get(id) != s) {
                return; // re-declared or forgotten meanwhile: that call reports
            }
            if (up && (!s.described || reannounce)) {
                if (reannounce) {
                    log.info("Metron server {} serves but its device has no master: announcing it again", id);
                    vanish(s);
                }
                connect(id, s, description, ports);
            } else if (!up && s.connected) {
                log.warn("Metron server {} is unreachable: device unavailable", id);
                disconnect(id, s);
            }
        }
    }

    private void connect(DeviceId id, Server s, DeviceDescription description, List<PortDescription> ports) {
        // isReachable() answers yes from the ping that found the agent serving just now: ONOS's DeviceManager asks
        // it as soon as deviceConnected has granted this node mastership, and gives the role up on a no
        s.connected = true;
        s.announced = System.currentTimeMillis();
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
        s.described = true;
        log.info("Metron server {} connected: {} ports, {} links", id, ports.size(), s.links.size());
    }

    private void disconnect(DeviceId id, Server s) {
        vanish(s);
        boolean was = s.connected;
        // isReachable() answers no from the ping that found the agent dead (a disconnect on a re-declaration pings
        // again when asked): ONOS relinquishes the role on deviceDisconnected and, on the mastership change that
        // follows, asks isReachable; a yes there takes the role again and marks the device online
        s.connected = false;
        s.described = false;
        if (was) {
            devices.deviceDisconnected(id);
        }
    }

    private void vanish(Server s) {
        s.links.forEach(links::linkVanished);
        s.links.clear();
    }
}
