package org.metron.embedded.net;

import org.metron.app.scaling.PortCounters;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.spi.SwitchProgrammer.Staged;
import org.metron.openflow.FlowRuleTranslator;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OfSwitchListener;
import org.metron.openflow.OpenFlowController;
import org.metron.openflow.OpenFlowException;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.projectfloodlight.openflow.protocol.OFFlowMod;
import org.projectfloodlight.openflow.protocol.OFFlowStatsEntry;
import org.projectfloodlight.openflow.protocol.OFGroupType;
import org.projectfloodlight.openflow.protocol.OFMessage;
import org.projectfloodlight.openflow.types.DatapathId;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * {@link SwitchProgrammer} over the OpenFlow 1.3 southbound: each install is one atomic ONF bundle; removals
 * are strict deletes followed by a barrier; fast-failover groups are OFPGT_FF group mods. Rules are recognised as
 * Metron's by the application id that ONOS encodes in the top 16 bits of every flow id (= the OpenFlow cookie), so
 * entries survive a host restart. A device that has never connected to this host's controller is one the network
 * does not know: it reads as ONOS's stores answer for such a device (no entries, 0 rules, no groups, no group to
 * delete), while a rule write to it fails as ONOS fails a batch for a device without master. A switch that was
 * connected and is no longer cannot be read here (there is no flow store to answer from, as ONOS's is): its reads
 * throw, which the core takes for "unknown", never for "empty".
 */
public final class OpenFlowSwitchProgrammer implements SwitchProgrammer, PortCounters {
    private static final Logger log = LoggerFactory.getLogger(OpenFlowSwitchProgrammer.class);
    /** The cookie bits holding the application id (ONOS's flow id layout). */
    private static final long APP_BITS = 0xFFFFL << 48;
    private final OpenFlowController openflow;
    private final short appId;
    /** Rules as the core handed them to us, by cookie, so entries() returns equal objects. */
    private final Map<Long, FlowRule> installed = new ConcurrentHashMap<>();
    private final boolean failoverGroups;
    /** Every switch that has connected to the controller: the OpenFlow devices the network knows. */
    private final Set<DatapathId> known = ConcurrentHashMap.newKeySet();

    public OpenFlowSwitchProgrammer(OpenFlowController openflow, ApplicationId appId) {
        this(openflow, appId, true);
    }

    /**
     * @param failoverGroups whether backups are armed in the switches as fast-failover groups (off: the controller
     *                       applies them after a failure; how the failover benchmark compares the two)
     */
    public OpenFlowSwitchProgrammer(OpenFlowController openflow, ApplicationId appId, boolean failoverGroups) {
        this.openflow = openflow;
        this.appId = appId.id();
        this.failoverGroups = failoverGroups;
        openflow.addListener(new OfSwitchListener() {
            @Override
            public void switchConnected(OfSwitch sw) {
                known.add(sw.dpid());
            }
        });
        openflow.switches().forEach(sw -> known.add(sw.dpid())); // after the listener: none is missed between
    }

    /** Whether the device is one the network does not know (never connected here; not an OpenFlow switch). */
    private boolean unknown(DeviceId device) {
        return dpid(device).map(d -> !known.contains(d)).orElse(true);
    }

    /** The datapath id an OpenFlow device id ({@code of:} and 16 hex digits) names; empty for any other device. */
    public static Optional<DatapathId> dpid(DeviceId device) {
        String id = device.toString();
        return id.startsWith("of:") ? Optional.of(DatapathId.of(Long.parseUnsignedLong(id.substring(3), 16)))
                : Optional.empty();
    }

    @Override
    public boolean supportsFailoverGroups() {
        return failoverGroups;
    }

    /** One OFPGC_ADD of type FF per group, then a barrier; fails naming the first group the switch refused. */
    @Override
    public CompletableFuture<Void> addGroups(DeviceId device, List<FailoverGroup> groups) {
        return send(device, tr -> groups.stream().map(g -> tr.addGroup(g.id(), g.buckets().stream()
                .map(FailoverGroup.Bucket::watchPort).collect(Collectors.toList()), g.buckets().stream()
                .map(FailoverGroup.Bucket::treatment).collect(Collectors.toList()))).collect(Collectors.toList()));
    }

    @Override
    public CompletableFuture<Void> removeGroups(DeviceId device, Collection<FailoverGroup> groups) {
        if (unknown(device)) {
            return CompletableFuture.completedFuture(null); // as ONOS's GroupService: it holds no group of it
        }
        return send(device, tr -> groups.stream().map(g -> tr.deleteGroup(g.id())).collect(Collectors.toList()));
    }

    /**
     * The switch's fast-failover groups (GROUP_DESC), each bucket's actions turned back into the treatment it was
     * added with. The embedded host is the switches' only controller: every FF group there is Metron's.
     */
    @Override
    public CompletableFuture<List<FailoverGroup>> readGroups(DeviceId device) {
        if (unknown(device)) {
            return CompletableFuture.completedFuture(List.of());
        }
        OfSwitch sw;
        try {
            sw = connected(device);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        FlowRuleTranslator tr = new FlowRuleTranslator(sw.factory());
        return sw.groupDescs().thenApply(descs -> descs.stream()
                .filter(g -> g.getGroupType() == OFGroupType.FF && g.getBuckets().size() >= 2)
                .map(g -> new FailoverGroup(device, g.getGroup().getGroupNumber(), g.getBuckets().stream()
                        .map(b -> new FailoverGroup.Bucket(PortNumber.portNumber(b.getWatchPort().getPortNumber()
                                & 0xffffffffL), tr.bucketTreatment(b.getActions())))
                        .collect(Collectors.toList())))
                .collect(Collectors.toList()));
    }

    /** Messages {@code mods} makes with the device's translator, sent with a barrier (a call that throws fails). */
    private CompletableFuture<Void> send(DeviceId device,
                                         Function<FlowRuleTranslator, List<? extends OFMessage>> mods) {
        try {
            OfSwitch sw = connected(device);
            return sw.send(mods.apply(new FlowRuleTranslator(sw.factory())));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private OfSwitch connected(DeviceId device) {
        DatapathId dpid = dpid(device).orElseThrow(() -> new OpenFlowException(device + " is not an OpenFlow switch"));
        return openflow.get(dpid)
                .filter(OfSwitch::isConnected)
                .orElseThrow(() -> new OpenFlowException(device + " is not connected"));
    }

    /** OpenFlow port statistics of a connected switch: what scaling's ingress trigger reads. */
    @Override
    public CompletableFuture<Map<Long, Long>> rxPackets(DeviceId device) {
        OfSwitch sw;
        try {
            sw = connected(device);
        } catch (OpenFlowException e) {
            return CompletableFuture.failedFuture(e);
        }
        return sw.portStats().thenApply(entries -> {
            Map<Long, Long> out = new HashMap<>();
            entries.forEach(e -> out.put((long) e.getPortNo().getPortNumber(), e.getRxPackets().getValue()));
            return out;
        });
    }

    @Override
    public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
        return stage(device, rules).thenCompose(Staged::commit);
    }

    /**
     * One ONF bundle: opened, filled and validated by the switch now, applied on commit; with removals, their
     * strict deletes are in the same bundle (a chain update's traffic moves in one atomic step).
     */
    @Override
    public CompletableFuture<Staged> stage(DeviceId device, List<FlowRule> rules, Collection<FlowRule> removals) {
        try {
            OfSwitch sw = connected(device);
            FlowRuleTranslator tr = new FlowRuleTranslator(sw.factory());
            List<OFFlowMod> mods = new ArrayList<>(rules.size());
            for (FlowRule r : rules) {
                if (!r.deviceId().equals(device)) {
                    throw new IllegalArgumentException("rule " + r.id() + " is for " + r.deviceId() + ", not " + device);
                }
                mods.add(tr.add(r));
            }
            removals.forEach(r -> mods.add(tr.deleteStrict(r)));
            long t0 = System.nanoTime();
            return sw.stageAtomically(mods).thenApply(bundle -> new Staged() {
                @Override
                public CompletableFuture<Void> commit() {
                    long t1 = System.nanoTime();
                    return bundle.commit().thenRun(() -> {
                        removals.forEach(r -> installed.remove(r.id().value()));
                        rules.forEach(r -> installed.put(r.id().value(), r));
                        log.info("{}: {} rules (and {} removals) shipped and checked {} ms before commit, live {} ms "
                                 + "after it (one bundle)", device, rules.size(), removals.size(),
                                 (t1 - t0) / 1_000_000, (System.nanoTime() - t1) / 1_000_000);
                    });
                }

                @Override
                public CompletableFuture<Void> discard() {
                    return bundle.discard();
                }
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
        return send(device, tr -> rules.stream().map(tr::deleteStrict).collect(Collectors.toList()))
                .thenRun(() -> rules.forEach(r -> installed.remove(r.id().value())));
    }

    /**
     * Metron's entries of one device as the switch reports them now (a flow-stats request filtered by the
     * application id in the cookie's top 16 bits, so the switch sends only ours): what the controller reads a
     * chain's installed rules from. Throws when a switch the network knows is not connected.
     */
    @Override
    public Collection<FlowEntry> entries(DeviceId device) {
        if (unknown(device)) {
            return List.of();
        }
        OfSwitch sw = connected(device);
        FlowRuleTranslator tr = new FlowRuleTranslator(sw.factory());
        List<FlowEntry> out = new ArrayList<>();
        for (OFFlowStatsEntry e : sw.flowStats(((long) appId & 0xFFFF) << 48, APP_BITS).join()) {
            long cookie = e.getCookie().getValue();
            if ((short) (cookie >>> 48) != appId) {
                continue;
            }
            FlowRule rule = installed.get(cookie);
            out.add(FlowRuleTranslator.toEntry(rule != null ? rule : tr.toRule(device, e), e));
        }
        return out;
    }

    @Override
    public int ruleCount(DeviceId device) {
        // placement asks before every chain: a count, not a dump of a table holding tens of thousands of rules
        if (unknown(device)) {
            return 0;
        }
        return Math.toIntExact(connected(device).activeFlows().join());
    }
}
