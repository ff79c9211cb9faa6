package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.store.InstalledRule;
import org.onosproject.core.GroupId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Plans how a chain's link backups are armed in the switches ahead of a failure (pure: rules in, rules and groups
 * out). A link backup is armable when, on the devices it shares with the chain's current rules, it differs only in
 * where rules at the link's two ends send traffic: each such rule (it outputs into the link) becomes a fast-failover
 * group, the current actions watching the link's port first and the backup's actions watching their own output port
 * second, and the flow entry sends to the group. The backup's rules on table entries the current rules do not use
 * (its other switches, the far end's new in-port) are installed beforehand: they match nothing until the group
 * switches over. A backup that would change any other current rule, or clash with a rule another armed backup
 * pre-installs, is not armed (the controller still applies it after the failure).
 *
 * <p>The chain's installed rules stay its one source of truth: the plan is derived from them and its backups, and
 * a redirected rule keeps its entry and id (a strict delete or a reroute's install of that entry replaces it).
 */
final class FailoverGroupPlanner {

    private FailoverGroupPlanner() {
    }

    /** What arming a chain's link backups installs, per device. */
    static final class Plan {
        private final Map<DeviceId, List<FailoverGroup>> groups;
        private final Map<DeviceId, List<FlowRule>> preinstalled;
        private final Map<DeviceId, List<FlowRule>> redirected;
        private final List<String> notArmed;

        Plan(Map<DeviceId, List<FailoverGroup>> groups, Map<DeviceId, List<FlowRule>> preinstalled,
             Map<DeviceId, List<FlowRule>> redirected, List<String> notArmed) {
            this.groups = copy(groups);
            this.preinstalled = copy(preinstalled);
            this.redirected = copy(redirected);
            this.notArmed = ImmutableList.copyOf(notArmed);
        }

        private static <T> Map<DeviceId, List<T>> copy(Map<DeviceId, List<T>> m) {
            ImmutableMap.Builder<DeviceId, List<T>> b = ImmutableMap.builder();
            m.forEach((d, l) -> b.put(d, ImmutableList.copyOf(l)));
            return b.build();
        }

        static Plan empty() {
            return new Plan(Map.of(), Map.of(), Map.of(), List.of());
        }

        /** The fast-failover groups, per device (added first). */
        Map<DeviceId, List<FailoverGroup>> groups() {
            return groups;
        }

        /** The backups' rules on entries the chain does not use, per device (added second). */
        Map<DeviceId, List<FlowRule>> preinstalled() {
            return preinstalled;
        }

        /** The chain's rules that now send to a group, same entries and ids, per device (added last). */
        Map<DeviceId, List<FlowRule>> redirected() {
            return redirected;
        }

        /** The backups not armed, each with why. */
        List<String> notArmed() {
            return notArmed;
        }

        boolean isEmpty() {
            return groups.isEmpty() && preinstalled.isEmpty();
        }
    }

    /** Chooses the id of each planned group. */
    @FunctionalInterface
    interface GroupIds {
        /**
         * The id of a group with these buckets on {@code device}: one the switch holds already with the same buckets
         * (adopted: the rule sending to it need not change), else a fresh one (ids are never reused for other
         * buckets while a rule may still send to them).
         */
        int id(DeviceId device, List<FailoverGroup.Bucket> buckets);
    }

    /**
     * Plans the arming of {@code backups} over the chain's current rules {@code primary}.
     */
    static Plan plan(List<InstalledRule> primary, List<LinkBackup> backups, GroupIds ids) {
        Map<Object, FlowRule> current = new HashMap<>();
        primary.forEach(r -> current.put(Deployer.entry(r.rule()), r.rule()));
        Map<Object, FlowRule> pre = new LinkedHashMap<>();
        Map<Object, List<FailoverGroup.Bucket>> diverted = new LinkedHashMap<>();
        List<String> notArmed = new ArrayList<>();
        for (LinkBackup lb : backups) {
            Map<Object, FlowRule> myPre = new LinkedHashMap<>();
            Map<Object, FailoverGroup.Bucket> myBackupBuckets = new LinkedHashMap<>();
            Optional<String> why = Optional.empty();
            for (InstalledRule ir : lb.backup().switchRules()) {
                FlowRule b = ir.rule();
                Object entry = Deployer.entry(b);
                FlowRule p = current.get(entry);
                if (p == null) {
                    FlowRule other = pre.get(entry);
                    if (other != null && !other.exactMatch(b)) {
                        why = Optional.of("its rule " + b.id() + " on " + b.deviceId()
                                + " clashes with another backup's");
                        break;
                    }
                    myPre.put(entry, b);
                    continue;
                }
                if (p.exactMatch(b)) {
                    continue;
                }
                Optional<PortNumber> out = linkPortOf(p, lb);
                Optional<PortNumber> backupOut = plainOutput(b.treatment());
                if (out.isEmpty() || backupOut.isEmpty() || backupOut.get().isLogical()
                        || plainOutput(p.treatment()).isEmpty() || p.timeout() != b.timeout()) {
                    why = Optional.of("it changes rule " + p.id() + " on " + p.deviceId()
                            + " beyond where the link's end sends it");
                    break;
                }
                if (diverted.containsKey(entry)) {
                    why = Optional.of("rule " + p.id() + " on " + p.deviceId() + " already has a group");
                    break;
                }
                myBackupBuckets.put(entry, new FailoverGroup.Bucket(backupOut.get(), b.treatment()));
            }
            if (why.isEmpty() && myBackupBuckets.isEmpty()) {
                // nothing at the link's ends would switch over: its other rules pre-installed would only take room
                why = Optional.of("no rule at the link's ends keeps its entry and changes only where it sends");
            }
            if (why.isPresent()) {
                notArmed.add(lb + ": " + why.get());
                continue;
            }
            pre.putAll(myPre);
            myBackupBuckets.forEach((entry, bucket) -> {
                FlowRule p = current.get(entry);
                diverted.put(entry, List.of(new FailoverGroup.Bucket(plainOutput(p.treatment()).get(),
                        p.treatment()), bucket));
            });
        }
        Map<DeviceId, List<FailoverGroup>> groups = new LinkedHashMap<>();
        Map<DeviceId, List<FlowRule>> redirected = new LinkedHashMap<>();
        diverted.forEach((entry, buckets) -> {
            FlowRule p = current.get(entry);
            FailoverGroup g = new FailoverGroup(p.deviceId(), ids.id(p.deviceId(), buckets), buckets);
            groups.computeIfAbsent(p.deviceId(), k -> new ArrayList<>()).add(g);
            redirected.computeIfAbsent(p.deviceId(), k -> new ArrayList<>()).add(toGroup(p, g.id()));
        });
        Map<DeviceId, List<FlowRule>> preinstalled = new LinkedHashMap<>();
        pre.values().forEach(r -> preinstalled.computeIfAbsent(r.deviceId(), k -> new ArrayList<>()).add(r));
        return new Plan(groups, preinstalled, redirected, notArmed);
    }

    /** The port a rule outputs to when that port is one end of the backup's failed link. */
    private static Optional<PortNumber> linkPortOf(FlowRule r, LinkBackup lb) {
        return plainOutput(r.treatment()).filter(port -> {
            ConnectPoint at = new ConnectPoint(r.deviceId(), port);
            return at.equals(lb.link().src()) || at.equals(lb.link().dst());
        });
    }

    /**
     * The one output port of a treatment made only of immediate actions (header rewrites, one output): what a
     * bucket can carry. Empty for anything else (table transitions, meters, several outputs).
     */
    static Optional<PortNumber> plainOutput(TrafficTreatment t) {
        if (t.tableTransition() != null || t.metered() != null || t.clearedDeferred() || !t.deferred().isEmpty()
                || t.writeMetadata() != null) {
            return Optional.empty();
        }
        PortNumber out = null;
        for (Instruction i : t.allInstructions()) {
            switch (i.type()) {
                case OUTPUT:
                    if (out != null) {
                        return Optional.empty();
                    }
                    out = ((Instructions.OutputInstruction) i).port();
                    break;
                case L2MODIFICATION:
                case L3MODIFICATION:
                case L4MODIFICATION:
                    if (out != null) {
                        return Optional.empty(); // rewrites after the output: not one bucket's action list
                    }
                    break;
                default:
                    return Optional.empty();
            }
        }
        return Optional.ofNullable(out);
    }

    /** The same rule (entry, id, timeouts) sending to a group instead. */
    static FlowRule toGroup(FlowRule r, int groupId) {
        return withTreatment(r, DefaultTrafficTreatment.builder().group(GroupId.valueOf(groupId)).build());
    }

    /** The same rule (entry, id, timeouts) with other actions. */
    static FlowRule withTreatment(FlowRule r, TrafficTreatment treatment) {
        FlowRule.Builder b = DefaultFlowRule.builder().forDevice(r.deviceId()).forTable(r.tableId())
                .withPriority(r.priority()).withSelector(r.selector()).withCookie(r.id().value())
                .withTreatment(treatment);
        return (r.isPermanent() ? b.makePermanent() : b.makeTemporary(r.timeout())).build();
    }
}
