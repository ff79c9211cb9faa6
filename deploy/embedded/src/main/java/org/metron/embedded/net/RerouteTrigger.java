package org.metron.embedded.net;

import org.metron.app.api.ChainId;
import org.metron.app.impl.ChainManager;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OfSwitchListener;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.PortNumber;
import org.onosproject.net.provider.ProviderId;
import org.projectfloodlight.openflow.protocol.OFPortConfig;
import org.projectfloodlight.openflow.protocol.OFPortDesc;
import org.projectfloodlight.openflow.protocol.OFPortReason;
import org.projectfloodlight.openflow.protocol.OFPortState;
import org.projectfloodlight.openflow.protocol.OFPortStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * What the ONOS component's device and link listeners do, from OpenFlow events: a switch that disconnects, or
 * a port that goes down (taking its link with it), makes the controller reroute the chains whose rules use the
 * devices concerned ({@link ChainManager#reroute}). One worker thread, off the switch channels, in event order.
 */
public final class RerouteTrigger implements OfSwitchListener, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RerouteTrigger.class);
    private static final ProviderId PID = new ProviderId("of", "org.metron.embedded");
    private final ChainManager manager;
    private final NetworkFile net;
    private final long delayMs;
    /** Ports last reported down (switch channels call from several threads). */
    private final Set<ConnectPoint> downPorts = ConcurrentHashMap.newKeySet();
    private final ExecutorService events = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "metron-reroute");
        t.setDaemon(true);
        return t;
    });

    public RerouteTrigger(ChainManager manager, NetworkFile net) {
        this(manager, net, 0);
    }

    /**
     * @param delayMs how long each event waits before the controller acts on it: with it, tests and benchmarks see
     *                what the switches' fast-failover groups do alone
     */
    public RerouteTrigger(ChainManager manager, NetworkFile net, long delayMs) {
        this.manager = manager;
        this.net = net;
        this.delayMs = delayMs;
    }

    @Override
    public void switchDisconnected(OfSwitch sw) {
        DeviceId id = DeviceId.deviceId(sw.deviceId());
        downPorts.removeIf(p -> p.deviceId().equals(id)); // a switch that comes back reports its ports afresh
        reroute(id, "switch " + id + " disconnected");
    }

    @Override
    public void portStatus(OfSwitch sw, OFPortStatus status) {
        OFPortDesc d = status.getDesc();
        boolean down = status.getReason() == OFPortReason.DELETE || d.getState().contains(OFPortState.LINK_DOWN)
                || d.getConfig().contains(OFPortConfig.PORT_DOWN);
        ConnectPoint end = new ConnectPoint(DeviceId.deviceId(sw.deviceId()),
                                            PortNumber.portNumber(d.getPortNo().getPortNumber()));
        // a port taken down reports twice (its config, then its link state; OVS, memif and veth alike): only its
        // transition to down is a failure to act on, as ONOS's device store posts PORT_UPDATED on a change only
        if (!down) {
            downPorts.remove(end);
            return;
        }
        if (!downPorts.add(end)) {
            return;
        }
        String cause = "port " + end + " down";
        for (List<ConnectPoint> link : net.links) {
            if (link.contains(end)) {
                ConnectPoint peer = link.get(0).equals(end) ? link.get(1) : link.get(0);
                if (net.switches.containsValue(peer.deviceId())) {
                    // a switch-to-switch link: chains with a backup for it go there (where its fast-failover
                    // groups already sent their traffic), the others that send into it are rerouted around its ends
                    Link l = DefaultLink.builder().providerId(PID).src(end).dst(peer).type(Link.Type.DIRECT).build();
                    act(cause, "link " + end + "-" + peer, () -> manager.rerouteLink(l, cause));
                    return;
                }
            }
        }
        reroute(end.deviceId(), cause);
    }

    private void reroute(DeviceId device, String cause) {
        act(cause, "rules on " + device, () -> manager.reroute(device, cause));
    }

    private void act(String cause, String what, java.util.function.Supplier<List<ChainId>> reroute) {
        events.execute(() -> {
            try {
                if (delayMs > 0) {
                    Thread.sleep(delayMs);
                }
                List<ChainId> moved = reroute.get();
                if (!moved.isEmpty()) {
                    log.info("Rerouted {} after {} ({})", moved, cause, what);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                log.warn("Rerouting after {} ({}) failed: {}", cause, what, e.toString());
            }
        });
    }

    /** Lets a reroute in progress finish (stopping halfway would leave rules of two paths); drops the rest. */
    @Override
    public void close() throws InterruptedException {
        events.shutdown();
        events.awaitTermination(60, TimeUnit.SECONDS);
    }
}
