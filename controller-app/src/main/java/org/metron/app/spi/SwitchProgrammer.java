package org.metron.app.spi;

import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Installs and removes flow rules on programmable switches.
 *
 * <p>Implementations must guarantee: {@link #install} is atomic per call (either every rule is in the device
 * when the future completes normally, or none of them is and the future completes exceptionally with a message
 * naming the device and the rejected rule); {@link #remove} of rules that are absent is not an error; rules are
 * identified by {@link FlowRule#id()} (device, table, priority, selector, app). Futures must complete (normally
 * or not) within the implementation's own deadline.
 */
public interface SwitchProgrammer {

    /** Adds all rules to one device, all or nothing. */
    CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules);

    /**
     * Stages rules on one device without making them live: the device checks them now (a rule it refuses fails
     * the future and nothing stays staged); {@link Staged#commit} then makes all of them live at once and
     * {@link Staged#discard} drops them. A deployment ships and checks its switch rules while the agent is still
     * starting the pipeline they steer traffic to, and commits them once it runs. The default stages nothing
     * and installs on commit (same guarantees as {@link #install}, checked later).
     */
    default CompletableFuture<Staged> stage(DeviceId device, List<FlowRule> rules) {
        return stage(device, rules, List.of());
    }

    /**
     * {@link #stage} that also takes {@code removals} away on commit, in the same atomic step: a chain update moves
     * traffic from its running version to the new one this way (docs/updates.md). A removal with the table entry
     * of an added rule must not be passed (the add replaces that entry). Implementations that can (an OpenFlow
     * bundle, one FlowRuleOperations batch) make adds and removals live at once; the default installs, then
     * removes.
     */
    default CompletableFuture<Staged> stage(DeviceId device, List<FlowRule> rules, Collection<FlowRule> removals) {
        return CompletableFuture.completedFuture(new Staged() {
            @Override
            public CompletableFuture<Void> commit() {
                return removals.isEmpty() ? install(device, rules)
                        : install(device, rules).thenCompose(v -> remove(device, removals));
            }

            @Override
            public CompletableFuture<Void> discard() {
                return CompletableFuture.completedFuture(null);
            }
        });
    }

    /** Rules staged on one device by {@link #stage}: exactly one of the two is called, once. */
    interface Staged {
        /** Makes every staged rule live at once (all or nothing, as {@link #install}). */
        CompletableFuture<Void> commit();

        /** Drops the staged rules; none of them was ever live. */
        CompletableFuture<Void> discard();
    }

    /** Removes rules from one device. */
    CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules);

    /** Rules currently in the device installed by Metron, with packet/byte counters. */
    Collection<FlowEntry> entries(DeviceId device);

    /** Rules currently in the device, all applications included: what counts against its capacity. */
    int ruleCount(DeviceId device);

    /**
     * Whether {@link #addGroups} works on this programmer's switches: then backup paths are installed ahead of time
     * as fast-failover groups and a link failure is absorbed by the switch (docs/failover.md). The default cannot.
     */
    default boolean supportsFailoverGroups() {
        return false;
    }

    /**
     * Adds fast-failover groups to one device, all of them or the future fails; a rule may refer to them once it
     * completes. Ids are the caller's (unused on the device).
     */
    default CompletableFuture<Void> addGroups(DeviceId device, List<FailoverGroup> groups) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("no failover groups here"));
    }

    /**
     * Deletes groups from one device (absent ones are not an error). A switch deletes the rules that still send to
     * a deleted group: callers first point those rules elsewhere.
     */
    default CompletableFuture<Void> removeGroups(DeviceId device, Collection<FailoverGroup> groups) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * The fast-failover groups Metron holds on one device as the device (or, in ONOS, the group store) reports them
     * now, with their ids and buckets: what a restarted or new owner of a chain reads back to adopt the groups still
     * armed and to delete the stale ones (docs/failover.md#restarts-and-takeovers). Groups of other applications and
     * of other types are left out. The default holds none.
     */
    default CompletableFuture<List<FailoverGroup>> readGroups(DeviceId device) {
        return CompletableFuture.completedFuture(List.of());
    }
}
