package org.metron.app.onos;

import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.SwitchProgrammer;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleOperationsContext;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.group.GroupService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

/**
 * {@link SwitchProgrammer} over FlowRuleService. ONOS applies a FlowRuleOperations batch without atomicity,
 * so a failed batch is compensated: whatever part of it went in is removed before the future fails. Fast-failover
 * groups go through GroupService ({@link FailoverGroups}).
 */
@Component(immediate = true, service = SwitchProgrammer.class)
public class OnosSwitchProgrammer implements SwitchProgrammer {
    public static final String APP_NAME = "org.metron.app";

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected FlowRuleService flowRuleService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected GroupService groupService;

    private ApplicationId appId;
    private FailoverGroups groups;

    @Activate
    protected void activate() {
        appId = coreService.registerApplication(APP_NAME);
        groups = new FailoverGroups(groupService, appId);
    }

    @Override
    public boolean supportsFailoverGroups() {
        return true;
    }

    @Override
    public CompletableFuture<Void> addGroups(DeviceId device, List<FailoverGroup> add) {
        return groups.add(device, add);
    }

    @Override
    public CompletableFuture<Void> removeGroups(DeviceId device, Collection<FailoverGroup> gone) {
        return groups.remove(device, gone);
    }

    @Override
    public CompletableFuture<List<FailoverGroup>> readGroups(DeviceId device) {
        try {
            return CompletableFuture.completedFuture(groups.read(device));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
        return apply(device, rules, List.of());
    }

    /**
     * Adds and removals in one FlowRuleOperations batch, one stage (ONOS hands a stage to the device as one flow
     * rule batch): what a chain update's move of traffic commits.
     */
    @Override
    public CompletableFuture<Staged> stage(DeviceId device, List<FlowRule> rules, Collection<FlowRule> removals) {
        return CompletableFuture.completedFuture(new Staged() {
            @Override
            public CompletableFuture<Void> commit() {
                return apply(device, rules, removals);
            }

            @Override
            public CompletableFuture<Void> discard() {
                return CompletableFuture.completedFuture(null);
            }
        });
    }

    private CompletableFuture<Void> apply(DeviceId device, List<FlowRule> rules, Collection<FlowRule> removals) {
        // one device per call, as the embedded host's OpenFlow bundles: a batch ONOS would spread over devices
        // could not be compensated as one
        for (FlowRule r : rules) {
            if (!r.deviceId().equals(device)) {
                return CompletableFuture.failedFuture(new IllegalArgumentException("rule " + r.id() + " is for "
                        + r.deviceId() + ", not " + device));
            }
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        rules.forEach(ops::add);
        removals.forEach(ops::remove);
        flowRuleService.apply(ops.build(new FlowRuleOperationsContext() {
            @Override
            public void onSuccess(FlowRuleOperations o) {
                done.complete(null);
            }

            @Override
            public void onError(FlowRuleOperations o) {
                FlowRuleOperations.Builder undo = FlowRuleOperations.builder();
                rules.forEach(undo::remove);
                removals.forEach(undo::add);
                flowRuleService.apply(undo.build());
                done.completeExceptionally(new IllegalStateException(device + " rejected " + rules.size()
                        + " rules" + (removals.isEmpty() ? "" : " and " + removals.size() + " removals")
                        + " (batch compensated): " + o));
            }
        }));
        return done;
    }

    @Override
    public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        rules.forEach(ops::remove);
        flowRuleService.apply(ops.build(new FlowRuleOperationsContext() {
            @Override
            public void onSuccess(FlowRuleOperations o) {
                done.complete(null);
            }

            @Override
            public void onError(FlowRuleOperations o) {
                done.completeExceptionally(new IllegalStateException(device + " failed to remove rules: " + o));
            }
        }));
        return done;
    }

    /**
     * Metron's entries of one device from ONOS's flow-rule store, in every state (PENDING_ADD, ADDED,
     * PENDING_REMOVE, ...). Read per device, not with {@code getFlowEntriesById(appId)}: FlowRuleManager answers that
     * by reading every device's table, so one available device without a master (its table throws
     * FlowRuleStoreException) would make every device unreadable, and a chain's read would cost every table.
     */
    @Override
    public Collection<FlowEntry> entries(DeviceId device) {
        return StreamSupport.stream(flowRuleService.getFlowEntries(device).spliterator(), false)
                .filter(e -> e.appId() == appId.id()).collect(Collectors.toList());
    }

    @Override
    public int ruleCount(DeviceId device) {
        return flowRuleService.getFlowRuleCount(device);
    }
}
