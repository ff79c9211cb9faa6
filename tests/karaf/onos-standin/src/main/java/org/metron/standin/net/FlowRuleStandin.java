package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.Iterables;
import org.onosproject.core.ApplicationId;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleEvent;
import org.onosproject.net.flow.FlowRuleListener;
import org.onosproject.net.flow.FlowRuleOperation;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleProgrammable;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.flow.FlowRuleStoreException;
import org.onosproject.net.flow.TableStatisticsEntry;
import org.metron.standin.cluster.AtomixNode;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * Flow rules (core-net's FlowRuleManager + flow store, stand-in). As ONOS's FlowRuleDriverProvider does, a
 * device whose driver has FlowRuleProgrammable gets its rules through that behaviour (so the Metron server
 * driver's NIC rules reach the real agent); a rule the behaviour does not accept fails its batch. Devices
 * without that behaviour are switches, whose OpenFlow provider is not here: their rules are recorded as ADDED
 * (no switch behind them). Batches run asynchronously, in order; callbacks and RULE_ADDED/REMOVED events follow.
 * <p>
 * Mastership as ONOS 2.7's ECFlowRuleStore has it: the entries of an AVAILABLE device with no master cannot be
 * read (FlowRuleStoreException "There is no master for available device ...", so ONOS's own GET /onos/v1/flows
 * answers 500), and a batch for a device with no master fails.
 * <p>
 * A switch that refuses rules, so that a caller's failure path runs: a switch device annotated
 * {@value #REJECT_ANNOTATION}=true (netcfg {@code devices/<id>/annotations/entries}, ONOS's DeviceAnnotationConfig) fails
 * every batch of rules to add to it, as a switch answering each flow-mod with an error would (ONOS's
 * FlowRuleManager then calls the batch's {@code onError}); removals still succeed, so what was installed can be
 * taken back. The smallest switch fault an OpenFlow switch really shows, set and cleared at run time over REST.
 */
@Component(immediate = true, service = FlowRuleService.class)
public class FlowRuleStandin extends AbstractListenerManager<FlowRuleEvent, FlowRuleListener>
        implements FlowRuleService {
    static final String REJECT_ANNOTATION = "standinRejectFlowRules";
    private final Logger log = LoggerFactory.getLogger(getClass());
    private volatile FlowTable entries;
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-flows"));

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DriverService drivers;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService devices;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastership;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    @Activate
    protected void activate() {
        entries = new FlowTable(atomixNode.atomix() == null ? null : atomixNode.bytesMap("onos-flow-table"));
        eventDispatcher = dispatcher;
        dispatcher.addSink(FlowRuleEvent.class, listenerRegistry);
    }

    @Deactivate
    protected void deactivate() {
        executor.shutdownNow();
        dispatcher.removeSink(FlowRuleEvent.class);
    }

    private FlowRuleProgrammable programmable(DeviceId id) {
        try {
            return drivers.getDriver(id).hasBehaviour(FlowRuleProgrammable.class)
                    ? drivers.createHandler(id).behaviour(FlowRuleProgrammable.class) : null;
        } catch (RuntimeException e) {
            return null; // unknown device or no driver: nothing to program, as for a switch
        }
    }

    /** ECFlowRuleStore: an available device with no master has no readable flow table. */
    private void checkMaster(DeviceId id) {
        if (mastership.getMasterFor(id) == null && devices.isAvailable(id)) {
            throw new FlowRuleStoreException("There is no master for available device " + id);
        }
    }

    /** Applies one stage's rules of one kind to one device; false if the device refused any. */
    private boolean applyToDevice(DeviceId id, List<FlowRule> rules, boolean add) {
        if (mastership.getMasterFor(id) == null) {
            log.warn("No master for {}: its {} flow rules fail", id, rules.size());
            return false;
        }
        FlowRuleProgrammable p = programmable(id);
        Collection<FlowRule> done = rules;
        if (p != null) {
            done = add ? p.applyFlowRules(rules) : p.removeFlowRules(rules);
        } else if (add && rejects(id)) {
            log.warn("Switch {} ({}=true) rejects {} flow rules", id, REJECT_ANNOTATION, rules.size());
            return false;
        }
        Set<FlowId> doneIds = done.stream().map(FlowRule::id).collect(Collectors.toSet());
        List<FlowRule> stored = rules.stream().filter(r -> doneIds.contains(r.id())).collect(Collectors.toList());
        if (add) {
            List<FlowEntry> added = stored.stream().map(r -> new DefaultFlowEntry(r, FlowEntry.FlowEntryState.ADDED))
                    .collect(Collectors.toList());
            entries.putAll(id, added);
            added.forEach(e -> post(new FlowRuleEvent(FlowRuleEvent.Type.RULE_ADDED, e)));
        } else {
            Set<FlowId> removed = entries.removeAll(id, stored.stream().map(FlowRule::id)
                    .collect(Collectors.toList()));
            stored.stream().filter(r -> removed.contains(r.id()))
                    .forEach(r -> post(new FlowRuleEvent(FlowRuleEvent.Type.RULE_REMOVED, r)));
        }
        return doneIds.size() == rules.size();
    }

    private boolean applyNow(FlowRuleOperations ops) {
        boolean ok = true;
        for (Set<FlowRuleOperation> stage : ops.stages()) {
            Map<Boolean, Map<DeviceId, List<FlowRule>>> byKind = stage.stream().collect(Collectors.partitioningBy(
                    op -> op.type() != FlowRuleOperation.Type.REMOVE,
                    Collectors.groupingBy(op -> op.rule().deviceId(),
                                          Collectors.mapping(FlowRuleOperation::rule, Collectors.toList()))));
            for (Map.Entry<Boolean, Map<DeviceId, List<FlowRule>>> kind : byKind.entrySet()) {
                for (Map.Entry<DeviceId, List<FlowRule>> dev : kind.getValue().entrySet()) {
                    try {
                        ok &= applyToDevice(dev.getKey(), dev.getValue(), kind.getKey());
                    } catch (RuntimeException e) {
                        log.warn("flow rules for {} failed", dev.getKey(), e);
                        ok = false;
                    }
                }
            }
            if (!ok) {
                break;
            }
        }
        return ok;
    }

    private boolean rejects(DeviceId id) {
        Device d = devices.getDevice(id);
        return d != null && "true".equals(d.annotations().value(REJECT_ANNOTATION));
    }

    @Override
    public void apply(FlowRuleOperations ops) {
        executor.execute(() -> {
            if (applyNow(ops)) {
                ops.callback().onSuccess(ops);
            } else {
                ops.callback().onError(ops);
            }
        });
    }

    private static FlowRuleOperations batch(boolean add, FlowRule... rules) {
        FlowRuleOperations.Builder b = FlowRuleOperations.builder();
        for (FlowRule r : rules) {
            if (add) {
                b.add(r);
            } else {
                b.remove(r);
            }
        }
        return b.build();
    }

    @Override
    public void applyFlowRules(FlowRule... rules) {
        apply(batch(true, rules));
    }

    @Override
    public void removeFlowRules(FlowRule... rules) {
        apply(batch(false, rules));
    }

    @Override
    public void purgeFlowRules(DeviceId deviceId) {
        entries.purge(deviceId);
    }

    @Override
    public void removeFlowRulesById(ApplicationId appId) {
        removeFlowRules(Iterables.toArray(getFlowEntriesById(appId), FlowRule.class));
    }

    @Override
    public int getFlowRuleCount() {
        return entries.all().size();
    }

    @Override
    public FlowEntry getFlowEntry(FlowRule rule) {
        checkMaster(rule.deviceId());
        return entries.get(rule.deviceId(), rule.id());
    }

    @Override
    public Iterable<FlowEntry> getFlowEntries(DeviceId deviceId) {
        checkMaster(deviceId);
        return entries.of(deviceId);
    }

    @Override
    public Iterable<FlowEntry> getFlowEntriesById(ApplicationId appId) {
        Collection<FlowEntry> all = entries.all();
        all.stream().map(FlowEntry::deviceId).distinct().forEach(this::checkMaster);
        return all.stream().filter(e -> e.appId() == appId.id())
                .collect(ImmutableList.toImmutableList());
    }

    @Override
    public Iterable<FlowRule> getFlowRulesByGroupId(ApplicationId appId, short groupId) {
        return entries.all().stream().filter(e -> e.appId() == appId.id() && e.groupId().id() == groupId)
                .collect(ImmutableList.toImmutableList());
    }

    @Override
    public Iterable<TableStatisticsEntry> getFlowTableStatistics(DeviceId deviceId) {
        return ImmutableList.of();
    }
}
