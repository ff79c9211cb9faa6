package org.metron.app.testing;

import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.SwitchProgrammer;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instructions;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Flow tables per device with the SPI's guarantees (atomic batches, idempotent removal), standing in for ONOS's
 * FlowRuleService in unit tests. Devices can be told to reject installs; every device counts against
 * {@code otherRules} foreign rules for capacity.
 */
public final class TestSwitches implements SwitchProgrammer {
    private final Map<DeviceId, Map<Object, FlowRule>> tables = new HashMap<>();
    private final Set<DeviceId> rejecting = new HashSet<>();
    private final Map<DeviceId, RuntimeException> unreadable = new HashMap<>();
    private final Set<DeviceId> refusingRemoval = new HashSet<>();
    private final Map<DeviceId, Integer> otherRules = new HashMap<>();
    private final Map<Long, FlowEntry.FlowEntryState> states = new HashMap<>();
    private final List<String> log = new ArrayList<>();
    private java.util.function.Consumer<DeviceId> beforeCommit = d -> { };
    private int openStages;
    /** Fast-failover groups per device by id; null: this stand-in takes no groups (the SPI default). */
    private Map<DeviceId, Map<Integer, FailoverGroup>> groups;

    /** Makes the devices take fast-failover groups, as OpenFlow 1.3 switches do (OVS). */
    public synchronized TestSwitches withFailoverGroups() {
        groups = new HashMap<>();
        return this;
    }

    public synchronized List<FailoverGroup> groups(DeviceId d) {
        return groups == null ? List.of() : new ArrayList<>(groups.getOrDefault(d, Map.of()).values());
    }

    @Override
    public synchronized CompletableFuture<List<FailoverGroup>> readGroups(DeviceId device) {
        if (unreadable.containsKey(device)) {
            return CompletableFuture.failedFuture(unreadable.get(device));
        }
        return CompletableFuture.completedFuture(groups(device));
    }

    @Override
    public synchronized boolean supportsFailoverGroups() {
        return groups != null;
    }

    @Override
    public synchronized CompletableFuture<Void> addGroups(DeviceId device, List<FailoverGroup> add) {
        if (groups == null) {
            return SwitchProgrammer.super.addGroups(device, add);
        }
        log.add("addGroups " + device + " " + add.size());
        Map<Integer, FailoverGroup> t = groups.computeIfAbsent(device, k -> new LinkedHashMap<>());
        for (FailoverGroup g : add) {
            if (t.containsKey(g.id())) { // OFPGMFC_GROUP_EXISTS
                return CompletableFuture.failedFuture(new IllegalStateException(device + " has group " + g.id()));
            }
        }
        add.forEach(g -> t.put(g.id(), g));
        return CompletableFuture.completedFuture(null);
    }

    /** As an OpenFlow switch: deleting a group deletes the rules that send to it. */
    @Override
    public synchronized CompletableFuture<Void> removeGroups(DeviceId device, Collection<FailoverGroup> gone) {
        log.add("removeGroups " + device + " " + gone.size());
        if (groups != null) {
            gone.forEach(g -> groups.getOrDefault(device, new HashMap<>()).remove(g.id()));
            Set<Integer> ids = new HashSet<>();
            gone.forEach(g -> ids.add(g.id()));
            tables.getOrDefault(device, new HashMap<>()).values().removeIf(r -> groupOf(r).map(ids::contains)
                    .orElse(false));
        }
        return CompletableFuture.completedFuture(null);
    }

    private static java.util.Optional<Integer> groupOf(FlowRule r) {
        return r.treatment().allInstructions().stream().filter(i -> i instanceof Instructions.GroupInstruction)
                .map(i -> ((Instructions.GroupInstruction) i).groupId().id()).findFirst();
    }

    public synchronized TestSwitches reject(DeviceId d) {
        rejecting.add(d);
        return this;
    }

    /** Undoes {@link #reject}. */
    public synchronized TestSwitches accept(DeviceId d) {
        rejecting.remove(d);
        return this;
    }

    /**
     * Makes reading the device's flow entries throw {@code e} (as ONOS's FlowRuleManager does for an available
     * device with no master); null makes it readable again.
     */
    public synchronized TestSwitches unreadable(DeviceId d, RuntimeException e) {
        if (e == null) {
            unreadable.remove(d);
        } else {
            unreadable.put(d, e);
        }
        return this;
    }

    /** Makes removals from the device fail (unreachable), or succeed again ({@code refuse} false). */
    public synchronized TestSwitches refuseRemoval(DeviceId d, boolean refuse) {
        if (refuse) {
            refusingRemoval.add(d);
        } else {
            refusingRemoval.remove(d);
        }
        return this;
    }

    /**
     * Makes {@link #entries} report the rule with this flow id in {@code state} (as ONOS's flow-rule store reports
     * a rule whose add or removal the device has not confirmed yet); null: ADDED again.
     */
    public synchronized TestSwitches entryState(long flowId, FlowEntry.FlowEntryState state) {
        if (state == null) {
            states.remove(flowId);
        } else {
            states.put(flowId, state);
        }
        return this;
    }

    public synchronized TestSwitches otherRules(DeviceId d, int n) {
        otherRules.put(d, n);
        return this;
    }

    public synchronized List<FlowRule> rules(DeviceId d) {
        return new ArrayList<>(tables.getOrDefault(d, Map.of()).values());
    }

    public synchronized int total() {
        return tables.values().stream().mapToInt(Map::size).sum();
    }

    /** "install|stage|commit|discard|remove dev n" in call order (stages with removals: "dev n -m"). */
    public synchronized List<String> log() {
        return new ArrayList<>(log);
    }

    @Override
    public synchronized CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
        log.add("install " + device + " " + rules.size());
        if (rejecting.contains(device)) {
            return CompletableFuture.failedFuture(new IllegalStateException(device + " rejected rule "
                    + rules.get(0).id() + ": OFPET_BAD_MATCH"));
        }
        for (FlowRule r : rules) { // OFPBAC_BAD_OUT_GROUP
            if (groupOf(r).filter(g -> groups == null || !groups.getOrDefault(device, Map.of()).containsKey(g))
                    .isPresent()) {
                return CompletableFuture.failedFuture(new IllegalStateException(device + " rejected rule " + r.id()
                        + ": no group " + groupOf(r).get()));
            }
        }
        Map<Object, FlowRule> t = tables.computeIfAbsent(device, k -> new LinkedHashMap<>());
        rules.forEach(r -> t.put(entry(r), r));
        return CompletableFuture.completedFuture(null);
    }

    /** A table entry is its table, priority and match, as in an OpenFlow switch (an add replaces it). */
    private static Object entry(FlowRule r) {
        return List.of(r.tableId(), r.priority(), r.selector());
    }

    /** Called with the device when staged rules are committed, before they go live. */
    public synchronized TestSwitches beforeCommit(java.util.function.Consumer<DeviceId> hook) {
        beforeCommit = hook;
        return this;
    }

    /** Batches staged and neither committed nor discarded yet. */
    public synchronized int openStages() {
        return openStages;
    }

    /** Checks the rules when staged (a rejecting device refuses them then, as a real one does). */
    @Override
    public synchronized CompletableFuture<Staged> stage(DeviceId device, List<FlowRule> rules,
                                                       Collection<FlowRule> removals) {
        String counts = rules.size() + (removals.isEmpty() ? "" : " -" + removals.size());
        log.add("stage " + device + " " + counts);
        if (rejecting.contains(device)) {
            return CompletableFuture.failedFuture(new IllegalStateException(device + " rejected rule "
                    + rules.get(0).id() + ": OFPET_BAD_MATCH"));
        }
        openStages++;
        return CompletableFuture.completedFuture(new Staged() {
            @Override
            public CompletableFuture<Void> commit() {
                synchronized (TestSwitches.this) {
                    openStages--;
                    beforeCommit.accept(device);
                    log.add("commit " + device + " " + counts);
                    Map<Object, FlowRule> t = tables.computeIfAbsent(device, k -> new LinkedHashMap<>());
                    removals.forEach(r -> t.remove(entry(r)));
                    rules.forEach(r -> t.put(entry(r), r));
                    return CompletableFuture.completedFuture(null);
                }
            }

            @Override
            public CompletableFuture<Void> discard() {
                synchronized (TestSwitches.this) {
                    openStages--;
                    log.add("discard " + device + " " + counts);
                    return CompletableFuture.completedFuture(null);
                }
            }
        });
    }

    @Override
    public synchronized CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
        log.add("remove " + device + " " + rules.size());
        if (refusingRemoval.contains(device)) {
            return CompletableFuture.failedFuture(new IllegalStateException(device + " does not answer"));
        }
        Map<Object, FlowRule> t = tables.getOrDefault(device, new HashMap<>());
        rules.forEach(r -> t.remove(entry(r))); // a strict delete: by match and priority
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized Collection<FlowEntry> entries(DeviceId device) {
        if (unreadable.containsKey(device)) {
            throw unreadable.get(device);
        }
        List<FlowEntry> out = new ArrayList<>();
        tables.getOrDefault(device, Map.of()).values().forEach(r -> out.add(new DefaultFlowEntry(r,
                states.getOrDefault(r.id().value(), FlowEntry.FlowEntryState.ADDED), 0, 7, 700)));
        return out;
    }

    @Override
    public synchronized int ruleCount(DeviceId device) {
        return tables.getOrDefault(device, Map.of()).size() + otherRules.getOrDefault(device, 0);
    }
}
