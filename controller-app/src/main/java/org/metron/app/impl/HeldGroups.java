package org.metron.app.impl;

import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.InstalledRule;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.instructions.Instructions;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The fast-failover groups some switches hold, read back from them ({@link SwitchProgrammer#readGroups}): what an
 * instance that did not arm a chain itself (the host restarted, or it took the chain over) knows of the chain's
 * arming, and what it checks its own arming against. Groups are matched by device, id and buckets, never by an id
 * scheme: a rule sending to a group is the group's one link to a chain (the rule's flow id is in the chain's record),
 * and the group's first bucket is the rule's plain form. A device that cannot be read is absent (nothing of it is
 * adopted, and nothing deleted).
 */
final class HeldGroups {
    private final Map<DeviceId, Map<Integer, FailoverGroup>> held;

    private HeldGroups(Map<DeviceId, Map<Integer, FailoverGroup>> held) {
        this.held = held;
    }

    /** Reads the groups of {@code devices}, each within {@code timeoutMs}. */
    static HeldGroups read(SwitchProgrammer switches, Collection<DeviceId> devices, long timeoutMs) {
        Map<DeviceId, Map<Integer, FailoverGroup>> out = new LinkedHashMap<>();
        for (DeviceId d : devices) {
            try {
                Map<Integer, FailoverGroup> byId = new LinkedHashMap<>();
                switches.readGroups(d).get(timeoutMs, TimeUnit.MILLISECONDS).forEach(g -> byId.put(g.id(), g));
                out.put(d, byId);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Exception e) {
                // unread: nothing there is adopted (a group is added fresh) and nothing deleted
            }
        }
        return new HeldGroups(out);
    }

    /** Whether the device was read. */
    boolean read(DeviceId d) {
        return held.containsKey(d);
    }

    /** The device's group with this id, as read. */
    Optional<FailoverGroup> group(DeviceId d, int id) {
        return Optional.ofNullable(held.getOrDefault(d, Map.of()).get(id));
    }

    /** Whether the device holds {@code g} as it is (same id and buckets). */
    boolean holds(FailoverGroup g) {
        return group(g.device(), g.id()).map(g::equals).orElse(false);
    }

    /** Every group read, per device. */
    Map<DeviceId, Collection<FailoverGroup>> all() {
        Map<DeviceId, Collection<FailoverGroup>> out = new LinkedHashMap<>();
        held.forEach((d, gs) -> out.put(d, gs.values()));
        return out;
    }

    /** The group a rule's treatment sends to, if any. */
    static Optional<Integer> sentTo(TrafficTreatment t) {
        return t.allInstructions().stream().filter(i -> i instanceof Instructions.GroupInstruction)
                .map(i -> ((Instructions.GroupInstruction) i).groupId().id()).findFirst();
    }

    /**
     * A chain's arming as the switches hold it: its rules (by flow id, {@code primary} in their plain form) that the
     * switches hold sending to a group read here, and those groups. What an earlier run or another instance armed;
     * its pre-installed rules are not known (a new arming installs the same ones again, on the same entries).
     */
    FailoverGroupPlanner.Plan found(SwitchProgrammer switches, List<InstalledRule> primary) {
        Map<DeviceId, List<FailoverGroup>> groups = new LinkedHashMap<>();
        Map<DeviceId, List<FlowRule>> redirected = new LinkedHashMap<>();
        Map<DeviceId, Set<Long>> ids = new HashMap<>();
        primary.forEach(r -> ids.computeIfAbsent(r.rule().deviceId(), k -> new java.util.HashSet<>())
                .add(r.rule().id().value()));
        ids.forEach((d, mine) -> {
            if (held.getOrDefault(d, Map.of()).isEmpty()) {
                return;
            }
            for (FlowEntry e : entries(switches, d)) {
                Optional<FailoverGroup> g = sentTo(e.treatment()).flatMap(id -> group(d, id));
                if (mine.contains(e.id().value()) && g.isPresent()) {
                    redirected.computeIfAbsent(d, k -> new ArrayList<>()).add(new DefaultFlowRule(e));
                    List<FailoverGroup> gs = groups.computeIfAbsent(d, k -> new ArrayList<>());
                    if (!gs.contains(g.get())) {
                        gs.add(g.get());
                    }
                }
            }
        });
        return new FailoverGroupPlanner.Plan(groups, Map.of(), redirected, List.of());
    }

    /** The groups Metron's rules on {@code d} send to, as the switch holds them now; empty when unread. */
    static Optional<Set<Integer>> referenced(SwitchProgrammer switches, DeviceId d) {
        try {
            Set<Integer> out = new java.util.HashSet<>();
            switches.entries(d).forEach(e -> sentTo(e.treatment()).ifPresent(out::add));
            return Optional.of(out);
        } catch (RuntimeException e) {
            return Optional.empty(); // unread: no group of it may be taken for unused
        }
    }

    private static Collection<FlowEntry> entries(SwitchProgrammer switches, DeviceId d) {
        try {
            return switches.entries(d);
        } catch (RuntimeException e) {
            return List.of();
        }
    }
}
