package org.metron.standin.openflow;

import org.metron.openflow.FlowRuleTranslator;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OfSwitchListener;
import org.metron.openflow.OpenFlowException;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.CompletedBatchOperation;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleProvider;
import org.onosproject.net.flow.FlowRuleProviderService;
import org.onosproject.net.flow.oldbatch.FlowRuleBatchEntry;
import org.onosproject.net.flow.oldbatch.FlowRuleBatchOperation;
import org.onosproject.net.provider.ProviderId;
import org.projectfloodlight.openflow.protocol.OFFlowMod;
import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFFlowStatsEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Flow rules to and from the switches, as ONOS 2.7.0's OpenFlowRuleProvider (providers/openflow/flow) does it:
 * {@code executeBatch} turns the batch into OpenFlow 1.3 flow mods (the project's FlowRuleTranslator, which plays
 * the part of ONOS's FlowModBuilderVer13: rule id as cookie, SEND_FLOW_REM, strict delete), sends them followed by
 * a barrier, and reports the batch through {@code batchOperationCompleted} once the barrier is answered: success,
 * or the rules whose flow mods the switch answered with an error (a rule the translator cannot express fails
 * before anything is sent); FLOW_REMOVED messages are reported as {@code flowRemoved}; and, as its
 * FlowStatsCollector, every switch this node masters is asked for its flow statistics every
 * {@code flowPollFrequency} (ONOS: 5 s) and what it holds is pushed with {@code pushFlowMetrics}, which makes
 * pending entries ADDED in the flow store.
 */
final class OfRuleProvider implements FlowRuleProvider, OfSwitchListener {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final OfDeviceProvider devices;
    private final MastershipService mastership;
    private final ScheduledExecutorService poller;
    private final long pollMs;
    private volatile FlowRuleProviderService service;

    OfRuleProvider(OfDeviceProvider devices, MastershipService mastership, ScheduledExecutorService poller,
                   long pollMs) {
        this.devices = devices;
        this.mastership = mastership;
        this.poller = poller;
        this.pollMs = pollMs;
    }

    void start(FlowRuleProviderService providerService) {
        this.service = providerService;
        poller.scheduleWithFixedDelay(this::pollAll, pollMs, pollMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public ProviderId id() {
        return OfDeviceProvider.PID;
    }

    private static FlowRuleTranslator translator(OfSwitch sw) {
        return new FlowRuleTranslator(sw.factory());
    }

    @Override
    public void applyFlowRule(FlowRule... rules) {
        sendWithoutReport(rules, true);
    }

    @Override
    public void removeFlowRule(FlowRule... rules) {
        sendWithoutReport(rules, false);
    }

    /** Rules the flow subsystem re-applies or takes back outside a batch: sent, errors only logged (as ONOS). */
    private void sendWithoutReport(FlowRule[] rules, boolean add) {
        for (FlowRule r : rules) {
            OfSwitch sw = devices.switchOf(r.deviceId());
            if (sw == null) {
                continue;
            }
            OFFlowMod mod;
            try {
                mod = add ? translator(sw).add(r) : translator(sw).deleteStrict(r);
            } catch (IllegalArgumentException e) {
                log.warn("flow {} on {}: {}", r.id(), r.deviceId(), e.getMessage());
                continue;
            }
            devices.mastered(sw).thenCompose(master -> master ? sw.send(List.of(mod)) : CompletableFuture
                    .failedFuture(notMaster(sw))).whenComplete((v, e) -> {
                        if (e != null) {
                            log.warn("{} of flow {} on {} failed: {}", add ? "install" : "removal", r.id(),
                                     r.deviceId(), e.getMessage());
                        }
                    });
        }
    }

    @Override
    public void executeBatch(FlowRuleBatchOperation batch) {
        DeviceId device = batch.deviceId();
        OfSwitch sw = devices.switchOf(device);
        List<FlowRule> rules = batch.getOperations().stream().map(FlowRuleBatchEntry::target)
                .collect(Collectors.toList());
        if (sw == null) {
            log.warn("batch {} for {}: switch not connected", batch.id(), device);
            failed(batch, Set.copyOf(rules));
            return;
        }
        FlowRuleTranslator translator = translator(sw);
        List<OFFlowMod> mods = new ArrayList<>();
        try {
            for (FlowRuleBatchEntry op : batch.getOperations()) {
                mods.add(op.operator() == FlowRuleBatchEntry.FlowRuleOperation.REMOVE
                                 ? translator.deleteStrict(op.target()) : translator.add(op.target()));
            }
        } catch (IllegalArgumentException e) {
            log.warn("batch {} for {}: {}", batch.id(), device, e.getMessage());
            failed(batch, Set.copyOf(rules));
            return;
        }
        // only a connection holding MASTER sends flow mods (AbstractOpenFlowSwitch.sendMsg); one whose MASTER
        // request is in flight sends once the switch has answered it
        devices.mastered(sw).thenCompose(master -> master ? sw.sendReportingErrors(mods)
                : CompletableFuture.<SortedMap<Integer, String>>failedFuture(notMaster(sw)))
                .whenComplete((rejected, error) -> {
                    if (error != null) {
                        log.warn("batch {} for {}: {}", batch.id(), device, error.getMessage());
                        failed(batch, Set.copyOf(rules));
                    } else if (!rejected.isEmpty()) {
                        logRejected(device, rejected, rules);
                        failed(batch, rejected.keySet().stream().map(rules::get).collect(Collectors.toSet()));
                    } else {
                        service.batchOperationCompleted(batch.id(),
                                                        new CompletedBatchOperation(true, Set.of(), device));
                    }
                });
    }

    /** AbstractOpenFlowSwitch.sendMsg's "Dropping message for switch ..." when this connection is no MASTER. */
    private OpenFlowException notMaster(OfSwitch sw) {
        return new OpenFlowException("dropped: this node's connection to " + sw + " holds role "
                + devices.roleOf(sw) + ", not MASTER");
    }

    private void logRejected(DeviceId device, SortedMap<Integer, String> rejected, List<FlowRule> rules) {
        int first = rejected.firstKey();
        log.warn("{} rejected {} flow mods; the first, for flow {}: {}", device, rejected.size(),
                 rules.get(first).id(), rejected.get(first));
    }

    private void failed(FlowRuleBatchOperation batch, Set<FlowRule> failed) {
        service.batchOperationCompleted(batch.id(), new CompletedBatchOperation(false, failed, batch.deviceId()));
    }

    @Override
    public void flowRemoved(OfSwitch sw, OFFlowRemoved removed) {
        if (service == null) {
            return; // before registration: the first statistics round settles the entry
        }
        DeviceId device = OfDeviceProvider.deviceId(sw);
        FlowRule rule = new FlowRuleTranslator(sw.factory()).toRule(device, removed);
        service.flowRemoved(new DefaultFlowEntry(rule, FlowEntry.FlowEntryState.REMOVED, removed.getDurationSec(),
                                                 removed.getPacketCount().getValue(),
                                                 removed.getByteCount().getValue()));
    }

    /** FlowStatsCollector: only the master of a switch reads its flows (a standby's view would be stale). */
    private void pollAll() {
        for (OfSwitch sw : devices.connected()) {
            DeviceId device = OfDeviceProvider.deviceId(sw);
            if (!mastership.isLocalMaster(device)) {
                continue;
            }
            sw.flowStats().whenComplete((stats, error) -> {
                if (error != null) {
                    log.debug("flow stats of {}: {}", device, error.getMessage());
                    return;
                }
                FlowRuleTranslator translator = translator(sw);
                List<FlowEntry> live = new ArrayList<>(stats.size());
                for (OFFlowStatsEntry e : stats) {
                    try {
                        live.add(FlowRuleTranslator.toEntry(translator.toRule(device, e), e));
                    } catch (RuntimeException unreadable) {
                        log.debug("flow entry of {} not readable: {}", device, unreadable.toString());
                    }
                }
                service.pushFlowMetrics(device, live);
            });
        }
    }
}
