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
import org.onosproject.net.flow.CompletedBatchOperation;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleEvent;
import org.onosproject.net.flow.FlowRuleListener;
import org.onosproject.net.flow.FlowRuleOperation;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleProgrammable;
import org.onosproject.net.flow.FlowRuleProvider;
import org.onosproject.net.flow.FlowRuleProviderRegistry;
import org.onosproject.net.flow.FlowRuleProviderService;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.flow.FlowRuleStoreException;
import org.onosproject.net.flow.TableStatisticsEntry;
import org.onosproject.net.flow.oldbatch.FlowRuleBatchEntry;
import org.onosproject.net.provider.AbstractProviderService;
import org.onosproject.net.provider.ProviderId;
import org.metron.standin.cluster.AtomixNode;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * Flow rules (core-net's FlowRuleManager + flow store, stand-in). As ONOS's FlowRuleDriverProvider does, a
 * device whose driver has FlowRuleProgrammable gets its rules through that behaviour (so the Metron server
 * driver's NIC rules reach the real agent); a rule the behaviour does not accept fails its batch. Devices
 * without that behaviour are switches, whose OpenFlow provider is not here: their rules are recorded as ADDED
 * (no switch behind them). Batches run asynchronously, each device's in order, devices side by side ({@link
 * DeviceLanes}); callbacks and RULE_ADDED/REMOVED events follow.
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
 * <p>
 * Devices a registered FlowRuleProvider reported (the OpenFlow stand-in's real switches, by ProviderId as
 * FlowRuleManager picks a provider) get their rules as ONOS 2.7's FlowRuleManager + ECFlowRuleStore handle them:
 * stored PENDING_ADD / PENDING_REMOVE, sent as one FlowRuleBatchOperation ({@link FlowProviders}); a batch the
 * provider completes with failures fails the operation (its failed adds leave the store: ONOS keeps them pending
 * and retries them on each stats round, which Metron's compensation removes anyway); the provider's
 * {@code pushFlowMetrics} makes a pending entry ADDED (RULE_ADDED) and then updates its counters, removes a
 * PENDING_REMOVE entry the switch no longer has (RULE_REMOVED), re-applies an ADDED entry the switch lost
 * (FlowRuleManager's flowMissing) and removes flows the store does not know (its extraneousFlow); {@code
 * flowRemoved} from the switch removes a PENDING_REMOVE entry and re-applies an ADDED one, as FlowRuleManager does.
 * In a cluster such a batch is applied by the device's master ({@link BatchForwarding}, as ECFlowRuleStore
 * forwards it there), whose connection alone may program the switch.
 */
@Component(immediate = true, service = {FlowRuleService.class, FlowRuleProviderRegistry.class})
public class FlowRuleStandin extends AbstractListenerManager<FlowRuleEvent, FlowRuleListener>
        implements FlowRuleService, FlowRuleProviderRegistry {
    static final String REJECT_ANNOTATION = "standinRejectFlowRules";
    private final Logger log = LoggerFactory.getLogger(getClass());
    private volatile FlowTable entries;
    private final FlowProviders providers = new FlowProviders();
    /** In a cluster: batches for devices another node masters go there (null for one node). */
    private volatile BatchForwarding forwarding;
    private DeviceLanes forwarded;
    /** Each device's batches and reports, in order; devices side by side ({@link DeviceLanes}). */
    private final DeviceLanes lanes = new DeviceLanes("standin-flows");
    /** Where an operation's later stages and its callback run (FlowRuleManager's operationsService). */
    private final ExecutorService operations = Executors.newFixedThreadPool(4, r -> new Thread(r, "standin-flow-ops"));

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
        if (atomixNode.atomix() != null) {
            forwarded = new DeviceLanes("standin-flows-forwarded");
            forwarding = new BatchForwarding(atomixNode.atomix(), (id, rules, add) -> {
                FlowRuleProvider p = providerOf(id);
                return p != null && mastership.isLocalMaster(id) && applyThroughProvider(p, id, rules, add);
            }, forwarded);
        }
        eventDispatcher = dispatcher;
        dispatcher.addSink(FlowRuleEvent.class, listenerRegistry);
    }

    @Deactivate
    protected void deactivate() {
        if (forwarding != null) {
            forwarding.close();
            forwarded.close();
        }
        lanes.close();
        operations.shutdownNow();
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
        FlowRuleProvider provider = providerOf(id);
        if (provider != null) {
            BatchForwarding f = forwarding;
            return f != null && !mastership.isLocalMaster(id)
                    ? f.toMaster(mastership.getMasterFor(id), id, rules, add)
                    : applyThroughProvider(provider, id, rules, add);
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

    private FlowRuleProvider providerOf(DeviceId id) {
        Device d = devices.getDevice(id);
        return d == null ? null : providers.of(d.providerId());
    }

    /** FlowRuleManager with a provider: entries stored pending, one batch sent, the provider's verdict awaited. */
    private boolean applyThroughProvider(FlowRuleProvider provider, DeviceId id, List<FlowRule> rules, boolean add) {
        FlowEntry.FlowEntryState state = add ? FlowEntry.FlowEntryState.PENDING_ADD
                : FlowEntry.FlowEntryState.PENDING_REMOVE;
        List<FlowEntry> pending = new ArrayList<>();
        List<FlowRuleBatchEntry> ops = new ArrayList<>();
        for (FlowRule r : rules) {
            FlowEntry stored = add ? null : entries.get(id, r.id());
            if (add || stored != null) {
                pending.add(new DefaultFlowEntry(add ? r : stored, state));
            }
            ops.add(new FlowRuleBatchEntry(add ? FlowRuleBatchEntry.FlowRuleOperation.ADD
                                               : FlowRuleBatchEntry.FlowRuleOperation.REMOVE, r));
        }
        entries.putAll(id, pending);
        FlowRuleEvent.Type requested = add ? FlowRuleEvent.Type.RULE_ADD_REQUESTED
                : FlowRuleEvent.Type.RULE_REMOVE_REQUESTED;
        pending.forEach(e -> post(new FlowRuleEvent(requested, e)));
        Set<FlowRule> failed = providers.execute(provider, id, ops);
        if (failed.isEmpty()) {
            return true;
        }
        log.warn("{} of {} flow rules to {} {} failed", failed.size(), rules.size(), add ? "add to" : "remove from",
                 id);
        if (add) {
            entries.removeAll(id, failed.stream().map(FlowRule::id).collect(Collectors.toList()));
        }
        return false;
    }

    /** A provider's report of what its device holds (FlowRuleManager's pushFlowMetricsInternal). */
    private void flowMetrics(FlowRuleProvider provider, DeviceId id, Iterable<FlowEntry> live, boolean missing) {
        Map<FlowId, FlowEntry> onDevice = new HashMap<>();
        live.forEach(e -> onDevice.put(e.id(), e));
        for (FlowEntry stored : entries.of(id)) {
            FlowEntry seen = onDevice.remove(stored.id());
            if (seen != null) {
                if (stored.state() == FlowEntry.FlowEntryState.PENDING_REMOVE) {
                    continue; // its removal is in flight
                }
                boolean first = stored.state() != FlowEntry.FlowEntryState.ADDED;
                if (first || seen.packets() != stored.packets() || seen.bytes() != stored.bytes()) {
                    // written only when something changed: in a cluster every write is a Raft commit
                    FlowEntry updated = new DefaultFlowEntry(stored, FlowEntry.FlowEntryState.ADDED, seen.life(),
                                                             seen.packets(), seen.bytes());
                    entries.put(id, updated);
                    post(new FlowRuleEvent(first ? FlowRuleEvent.Type.RULE_ADDED : FlowRuleEvent.Type.RULE_UPDATED,
                                           updated));
                }
            } else if (missing) {
                flowGone(provider, id, stored, "missing from");
            }
        }
        if (missing) {
            onDevice.values().forEach(extra -> {
                log.debug("extraneous flow {} on {}: removed", extra.id(), id);
                provider.removeFlowRule(extra);
            });
        }
    }

    /** A stored entry the device no longer has: removed if its removal was asked, else installed again. */
    private void flowGone(FlowRuleProvider provider, DeviceId id, FlowEntry stored, String how) {
        switch (stored.state()) {
            case PENDING_REMOVE:
            case REMOVED:
                if (entries.remove(id, stored.id())) {
                    post(new FlowRuleEvent(FlowRuleEvent.Type.RULE_REMOVED, stored));
                }
                break;
            case ADDED:
                log.info("flow {} {} {}: installing it again", stored.id(), how, id);
                provider.applyFlowRule(stored);
                break;
            default:
                break; // PENDING_ADD: its batch is still in flight
        }
    }

    /** What a registered provider reports; handled on its device's lane, in order with the device's batches. */
    private final class ProviderService extends AbstractProviderService<FlowRuleProvider>
            implements FlowRuleProviderService {
        ProviderService(FlowRuleProvider provider) {
            super(provider);
        }

        private void later(DeviceId device, Runnable r) {
            lanes.of(device).execute(() -> {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    log.warn("flow report from {} failed: {}", provider().id(), e.toString(), e);
                }
            });
        }

        @Override
        public void flowRemoved(FlowEntry removed) {
            checkValidity();
            later(removed.deviceId(), () -> {
                FlowEntry stored = entries.get(removed.deviceId(), removed.id());
                if (stored != null) {
                    flowGone(provider(), removed.deviceId(), stored, "removed by");
                }
            });
        }

        @Override
        public void pushFlowMetrics(DeviceId id, Iterable<FlowEntry> live) {
            checkValidity();
            later(id, () -> flowMetrics(provider(), id, live, true));
        }

        @Override
        public void pushFlowMetricsWithoutFlowMissing(DeviceId id, Iterable<FlowEntry> live) {
            checkValidity();
            later(id, () -> flowMetrics(provider(), id, live, false));
        }

        @Override
        public void pushTableStatistics(DeviceId id, List<TableStatisticsEntry> stats) {
            // table statistics are not kept (getFlowTableStatistics answers none)
        }

        @Override
        public void batchOperationCompleted(long batchId, CompletedBatchOperation result) {
            providers.completed(batchId, result);
        }
    }

    @Override
    public FlowRuleProviderService register(FlowRuleProvider provider) {
        providers.add(provider);
        return new ProviderService(provider);
    }

    @Override
    public void unregister(FlowRuleProvider provider) {
        providers.remove(provider);
    }

    @Override
    public Set<ProviderId> getProviders() {
        return providers.ids();
    }

    /**
     * The stages from {@code from} on, one after the other; a stage's device batches on their devices' lanes, side
     * by side (a device's removals before its adds, as before); true if every rule was applied.
     */
    private CompletableFuture<Boolean> applyStages(List<Set<FlowRuleOperation>> stages, int from) {
        if (from == stages.size()) {
            return CompletableFuture.completedFuture(true);
        }
        Map<DeviceId, List<FlowRuleOperation>> byDevice = stages.get(from).stream()
                .collect(Collectors.groupingBy(op -> op.rule().deviceId(), LinkedHashMap::new, Collectors.toList()));
        List<CompletableFuture<Boolean>> batches = new ArrayList<>();
        byDevice.forEach((device, ops) -> batches.add(CompletableFuture.supplyAsync(() -> {
            boolean ok = true;
            for (boolean add : new boolean[] {false, true}) {
                List<FlowRule> rules = ops.stream().filter(op -> (op.type() != FlowRuleOperation.Type.REMOVE) == add)
                        .map(FlowRuleOperation::rule).collect(Collectors.toList());
                try {
                    ok &= rules.isEmpty() || applyToDevice(device, rules, add);
                } catch (RuntimeException e) {
                    log.warn("flow rules for {} failed", device, e);
                    ok = false;
                }
            }
            return ok;
        }, lanes.of(device))));
        return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new))
                .thenComposeAsync(v -> batches.stream().allMatch(CompletableFuture::join)
                        ? applyStages(stages, from + 1) : CompletableFuture.completedFuture(false), operations);
    }

    private boolean rejects(DeviceId id) {
        Device d = devices.getDevice(id);
        return d != null && "true".equals(d.annotations().value(REJECT_ANNOTATION));
    }

    /**
     * As FlowRuleManager: the operation's first stage is handed to its devices at once (on the caller's thread here,
     * so two operations reach a device in the order they were applied), its callback runs on the operations' pool.
     */
    @Override
    public void apply(FlowRuleOperations ops) {
        applyStages(ops.stages(), 0).whenCompleteAsync((ok, e) -> {
            if (e == null && ok) {
                ops.callback().onSuccess(ops);
            } else {
                ops.callback().onError(ops);
            }
        }, operations);
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

    /**
     * As ECFlowRuleStore.getFlowRuleCount(device, state) behind FlowRuleManager: the device's entries in every
     * state, 0 for an available device with no master (ONOS logs it at WARN). FlowRuleService's own default
     * answers 0 for every device, which made a switch look empty to placement.
     */
    @Override
    public int getFlowRuleCount(DeviceId deviceId) {
        return getFlowRuleCount(deviceId, null);
    }

    @Override
    public int getFlowRuleCount(DeviceId deviceId, FlowEntry.FlowEntryState state) {
        if (mastership.getMasterFor(deviceId) == null && devices.isAvailable(deviceId)) {
            log.warn("Failed to getFlowRuleCount: No master for {}", deviceId);
            return 0;
        }
        return (int) entries.of(deviceId).stream().filter(e -> state == null || e.state() == state).count();
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

    /**
     * As FlowRuleManager: every known device's table read in turn (ECFlowRuleStore.getFlowEntries), so a single
     * available device with no master makes the whole call throw, and entries in every state (PENDING_ADD,
     * PENDING_REMOVE included) are answered.
     */
    @Override
    public Iterable<FlowEntry> getFlowEntriesById(ApplicationId appId) {
        ImmutableList.Builder<FlowEntry> out = ImmutableList.builder();
        for (Device d : devices.getDevices()) {
            getFlowEntries(d.id()).forEach(e -> {
                if (e.appId() == appId.id()) {
                    out.add(e);
                }
            });
        }
        return out.build();
    }

    /** As FlowRuleManager: the flow id's top 32 bits are the application id and the group id, every device read. */
    @Override
    public Iterable<FlowRule> getFlowRulesByGroupId(ApplicationId appId, short groupId) {
        long lookUp = ((long) appId.id() << 16) | groupId;
        ImmutableList.Builder<FlowRule> out = ImmutableList.builder();
        for (Device d : devices.getDevices()) {
            getFlowEntries(d.id()).forEach(e -> {
                if ((e.id().value() >>> 32) == lookUp) {
                    out.add(e);
                }
            });
        }
        return out.build();
    }

    @Override
    public Iterable<TableStatisticsEntry> getFlowTableStatistics(DeviceId deviceId) {
        return ImmutableList.of();
    }
}
