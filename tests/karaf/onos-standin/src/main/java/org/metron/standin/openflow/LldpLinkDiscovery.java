package org.metron.standin.openflow;

import org.metron.openflow.OfSwitch;
import org.metron.openflow.OfSwitchListener;
import org.onlab.packet.Ethernet;
import org.onlab.packet.MacAddress;
import org.onlab.packet.ONOSLLDP;
import org.onosproject.cluster.ClusterMetadata;
import org.onosproject.cluster.ClusterService;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.link.DefaultLinkDescription;
import org.onosproject.net.link.LinkProvider;
import org.onosproject.net.link.LinkProviderService;
import org.onosproject.net.link.ProbedLinkProvider;
import org.onosproject.net.provider.ProviderId;
import org.projectfloodlight.openflow.protocol.OFPacketIn;
import org.projectfloodlight.openflow.protocol.match.MatchField;
import org.projectfloodlight.openflow.types.OFPort;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * ONOS 2.7.0's LLDP link discovery (providers/lldp LldpLinkProvider with providers/lldpcommon LinkDiscovery) at its
 * defaults, on the OpenFlow switches of this node: every {@value #PROBE_RATE_MS} ms the master of each switch sends,
 * as a PACKET_OUT on each enabled physical port, an ONOS LLDP probe (onlab-misc's ONOSLLDP, signed with the cluster
 * secret and time-stamped, from the cluster's fingerprint MAC, to ONOS's LLDP MAC); the probe crossing a cable comes
 * back from the switch at the other end as a PACKET_IN, by the intercept the provider requests ({@link
 * PacketIntercepts}: ETH_TYPE 0x88cc to the controller, priority CONTROL 40000, core app), and its master reports
 * the link {@code linkDetected(src -> dst, DIRECT)} once the probe verifies (signature, and no older than
 * {@value #MAX_LLDP_AGE_MS} ms, maxLldpAge); a probe of another cluster (another fingerprint) is an EDGE link, as
 * ONOS has it. A link not seen again for {@value #STALE_LINK_AGE_MS} ms (staleLinkAge) is reported
 * {@code linkVanished} by the pruner (every 3 s); a port disabled or removed, or a device gone, vanishes its links
 * at once. Not stood in: BDDP (ONOS's useBDDP also sends broadcast 0x8942 probes, which report INDIRECT links
 * across non-OpenFlow segments; this runtime has none), LLDP from non-ONOS speakers, suppression configuration.
 */
final class LldpLinkDiscovery implements LinkProvider, OfSwitchListener {
    static final ProviderId PID = new ProviderId("lldp", "org.onosproject.provider.lldp");
    static final int PROBE_RATE_MS = 3000;
    static final int STALE_LINK_AGE_MS = 10000;
    static final int MAX_LLDP_AGE_MS = 1000;
    private static final int PRUNE_EVERY_S = 3;
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final OfDeviceProvider switches;
    private final DeviceService devices;
    private final MastershipService mastership;
    private final ScheduledExecutorService executor;
    /** ONOS's cluster metadata without a cluster.json: name "default", whence fingerprint and secret. */
    private final ClusterMetadata metadata;
    private final String fingerprint;
    private final DeviceListener deviceListener = this::deviceChanged;
    /** When each link this node reported was last seen (LldpLinkProvider.linkTimes). */
    private final Map<LinkKey, Long> linkTimes = new ConcurrentHashMap<>();
    private volatile LinkProviderService service;

    LldpLinkDiscovery(OfDeviceProvider switches, DeviceService devices, MastershipService mastership,
                      ClusterService cluster, ScheduledExecutorService executor) {
        this.switches = switches;
        this.devices = devices;
        this.mastership = mastership;
        this.executor = executor;
        this.metadata = new ClusterMetadata("default", cluster.getLocalNode(), Set.copyOf(cluster.getNodes()),
                                            Set.of());
        this.fingerprint = ProbedLinkProvider.fingerprintMac(metadata);
    }

    @Override
    public ProviderId id() {
        return PID;
    }

    void start(LinkProviderService providerService) {
        this.service = providerService;
        devices.addListener(deviceListener);
        executor.scheduleWithFixedDelay(this::probeAll, 0, PROBE_RATE_MS, TimeUnit.MILLISECONDS);
        executor.scheduleWithFixedDelay(this::prune, PRUNE_EVERY_S, PRUNE_EVERY_S, TimeUnit.SECONDS);
        log.info("LLDP link discovery: probes every {} ms from {}, stale after {} ms", PROBE_RATE_MS, fingerprint,
                 STALE_LINK_AGE_MS);
    }

    void stop() {
        devices.removeListener(deviceListener);
        linkTimes.clear();
    }

    private void run(String what, Runnable r) {
        executor.execute(() -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.warn("LLDP link discovery: {}: {}", what, e.toString(), e);
            }
        });
    }

    private void probeAll() {
        try {
            switches.connected().forEach(this::probe);
        } catch (RuntimeException e) {
            log.warn("LLDP probes: {}", e.toString(), e); // a failed round must not end the schedule
        }
    }

    /** LinkDiscovery.run: only the master of a switch probes it, one probe per enabled physical port. */
    private void probe(OfSwitch sw) {
        DeviceId id = OfDeviceProvider.deviceId(sw);
        Device device = devices.getDevice(id);
        if (device == null || !mastership.isLocalMaster(id) || !devices.isAvailable(id)) {
            return;
        }
        log.debug("probing {} ({} ports)", id, devices.getPorts(id).size());
        for (Port p : devices.getPorts(id)) {
            if (p.isEnabled() && !p.number().isLogical()) {
                ONOSLLDP lldp = ONOSLLDP.onosSecureLLDP(id.toString(), device.chassisId(), (int) p.number().toLong(),
                                                        metadata.getClusterSecret());
                Ethernet frame = new Ethernet();
                frame.setEtherType(Ethernet.TYPE_LLDP).setDestinationMACAddress(MacAddress.ONOS_LLDP)
                        .setSourceMACAddress(fingerprint).setPad(true).setPayload(lldp);
                sw.packetOut(OFPort.of((int) p.number().toLong()), frame.serialize());
            }
        }
    }

    @Override
    public void packetIn(OfSwitch sw, OFPacketIn packetIn) {
        byte[] data = packetIn.getData();
        OFPort in = packetIn.getMatch().get(MatchField.IN_PORT);
        // Ethernet.TYPE_LLDP is a (negative) short: compared as the unsigned 16 bits the frame carries
        if (in == null || data.length < 14
                || (((data[12] & 0xff) << 8) | (data[13] & 0xff)) != (Ethernet.TYPE_LLDP & 0xffff)) {
            return;
        }
        run("LLDP from " + sw, () -> received(OfDeviceProvider.deviceId(sw), in, data));
    }

    /** LinkDiscovery.processOnosLldp, for the switch that received the probe when this node masters it. */
    private void received(DeviceId receiver, OFPort in, byte[] data) {
        if (service == null || !mastership.isLocalMaster(receiver)) {
            return;
        }
        Ethernet eth;
        try {
            eth = Ethernet.deserializer().deserialize(data, 0, data.length);
        } catch (Exception e) {
            log.debug("unreadable frame from {}: {}", receiver, e.toString());
            return;
        }
        ONOSLLDP lldp = ONOSLLDP.parseONOSLLDP(eth);
        if (lldp == null || lldp.getDeviceString() == null || lldp.getDeviceString().isEmpty()) {
            log.info("LLDP frame on {}/{} is no ONOS probe", receiver, in.getPortNumber());
            return;
        }
        Link.Type type = Link.Type.DIRECT;
        if (!eth.getSourceMAC().toString().equalsIgnoreCase(fingerprint)) {
            type = Link.Type.EDGE; // another cluster's probe: ONOS takes it unverified, as an edge link
        } else if (!ONOSLLDP.verify(lldp, metadata.getClusterSecret(), MAX_LLDP_AGE_MS)) {
            log.warn("LLDP probe from {} received on {}/{} failed to verify (older than {} ms or bad signature)",
                     lldp.getDeviceString(), receiver, in.getPortNumber(), MAX_LLDP_AGE_MS);
            return;
        }
        ConnectPoint src = new ConnectPoint(DeviceId.deviceId(lldp.getDeviceString()),
                                            PortNumber.portNumber(lldp.getPort()));
        ConnectPoint dst = new ConnectPoint(receiver, PortNumber.portNumber(in.getPortNumber() & 0xffffffffL));
        service.linkDetected(new DefaultLinkDescription(src, dst, type));
        if (linkTimes.put(LinkKey.linkKey(src, dst), System.currentTimeMillis()) == null) {
            log.info("link {} -> {} ({}) discovered", src, dst, type);
        }
    }

    /** LinkPrunerTask: links into switches this node no longer masters are forgotten, stale ones vanish. */
    private void prune() {
        long staleBefore = System.currentTimeMillis() - STALE_LINK_AGE_MS;
        try {
            linkTimes.entrySet().removeIf(e -> {
                if (!mastership.isLocalMaster(e.getKey().dst().deviceId())) {
                    return true;
                }
                if (e.getValue() < staleBefore) {
                    log.info("link {} -> {} not seen for {} ms: vanished", e.getKey().src(), e.getKey().dst(),
                             STALE_LINK_AGE_MS);
                    service.linkVanished(new DefaultLinkDescription(e.getKey().src(), e.getKey().dst(),
                                                                    Link.Type.DIRECT));
                    return true;
                }
                return false;
            });
        } catch (RuntimeException e) {
            log.warn("LLDP link pruning: {}", e.toString(), e);
        }
    }

    /** LldpLinkProvider's DeviceEventProcessor: a port down or gone, a device gone: its links vanish now. */
    private void deviceChanged(DeviceEvent e) {
        DeviceId id = e.subject().id();
        switch (e.type()) {
            case DEVICE_ADDED:
                run("first probes of " + id, () -> probeNow(id));
                break;
            case PORT_ADDED:
            case PORT_UPDATED:
                if (e.port().isEnabled()) {
                    run("first probes of " + id, () -> probeNow(id));
                } else {
                    vanished(new ConnectPoint(id, e.port().number()));
                }
                break;
            case PORT_REMOVED:
                vanished(new ConnectPoint(id, e.port().number()));
                break;
            case DEVICE_REMOVED:
            case DEVICE_SUSPENDED:
                vanished(id);
                break;
            case DEVICE_AVAILABILITY_CHANGED:
                if (devices.isAvailable(id)) {
                    run("first probes of " + id, () -> probeNow(id));
                } else {
                    vanished(id);
                }
                break;
            default:
                break;
        }
    }

    /** LinkDiscovery's first probe, sent as soon as a device or port is there rather than at the next round. */
    private void probeNow(DeviceId id) {
        OfSwitch sw = switches.switchOf(id);
        if (sw != null && sw.isConnected()) {
            probe(sw);
        }
    }

    /**
     * ONOS's provider reports linksVanished for any device; here only for links its probes found, so that the
     * links other providers report in this runtime (Metron's server cables, netcfg's) stay theirs to withdraw.
     */
    private void vanished(ConnectPoint cp) {
        if (linkTimes.keySet().removeIf(k -> k.src().equals(cp) || k.dst().equals(cp))) {
            run("links of " + cp + " vanished", () -> service.linksVanished(cp));
        }
    }

    private void vanished(DeviceId id) {
        if (linkTimes.keySet().removeIf(k -> k.src().deviceId().equals(id) || k.dst().deviceId().equals(id))) {
            run("links of " + id + " vanished", () -> service.linksVanished(id));
        }
    }
}
