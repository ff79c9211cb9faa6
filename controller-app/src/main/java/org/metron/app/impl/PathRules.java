package org.metron.app.impl;

import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.NetworkView;
import org.metron.app.store.InstalledRule;
import org.metron.synth.TagType;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.metron.app.impl.RulePlanner.RETURN_PRIORITY;
import static org.metron.app.impl.RulePlanner.TRANSIT_PRIORITY;

/**
 * The switch rules along a path that {@link RulePlanner} composes into a chain's plan (and a scaled-out group's
 * remote path): TRANSIT rules carrying group tags toward a server NIC, RETURN rules carrying the marked output to
 * an egress point, the tag and marker matches and writes, and the one place a rule gets its id. Kept apart from
 * the planner because these depend only on the network view and the path, not on the compiled chain: the
 * planner decides which paths a chain needs, this builds the rules of one path.
 */
final class PathRules {
    private final ApplicationId appId;
    private final NetworkView network;

    PathRules(ApplicationId appId, NetworkView network) {
        this.appId = appId;
        this.network = network;
    }

    /**
     * Adds TRANSIT rules carrying the tags of {@code groups} along {@code path} to {@code to}, on every programmable
     * device the path enters (its first device's own rules output onto it), matching the port they enter by;
     * downstream first.
     *
     * @return the first device's port onto the path ({@code to}'s own port when the path is empty)
     */
    PortNumber transitRules(List<Link> path, ConnectPoint to, List<GroupAssignment> groups,
                                    Map<DeviceId, Map<FlowId, InstalledRule>> rules) {
        for (int i = path.size() - 1; i >= 0; i--) {
            DeviceId dev = path.get(i).dst().deviceId();
            if (network.device(dev).map(n -> n.role().programmable()).orElse(false)) {
                PortNumber out = i < path.size() - 1 ? path.get(i + 1).src().port() : to.port();
                for (GroupAssignment ga : groups) {
                    add(rules, dev, Role.TRANSIT, TRANSIT_PRIORITY, tagSelector(ga.tag())
                            .matchInPort(path.get(i).dst().port()), DefaultTrafficTreatment.builder().setOutput(out));
                }
            }
        }
        return path.isEmpty() ? to.port() : path.get(0).src().port();
    }

    static ConnectPoint cabled(MetronServer s, String nic) {
        return s.attachment(nic).orElseThrow(() -> new MetronException(Fault.INTERNAL, "server " + s.id()
                + " NIC " + nic + " is not cabled"));
    }

    List<Link> returnPath(ConnectPoint from, ConnectPoint egress) {
        return network.path(from, egress).orElseThrow(() -> new MetronException(
                Fault.IMPOSSIBLE_PLACEMENT, "no path from " + from + " to egress " + egress));
    }

    /** Index of the last device of {@code path} (0 = {@code from}'s) that holds rules, -1 when none does. */
    int lastProgrammable(ConnectPoint from, List<Link> path) {
        for (int i = path.size(); i >= 0; i--) {
            DeviceId dev = i == 0 ? from.deviceId() : path.get(i - 1).dst().deviceId();
            if (network.device(dev).map(n -> n.role().programmable()).orElse(false)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Adds RETURN rules forwarding packets marked with {@code markerMac} (and the marker's VLAN) from
     * {@code from} to {@code egress} on every programmable device of the path; the last of them writes the
     * next host's MAC, when known, since no rule after it needs the marker.
     *
     * @param skipFirst the first device is the offload device, whose own rule outputs the packet
     * @return the output port on the first device
     */
    PortNumber returnRules(ConnectPoint from, List<Link> path, ConnectPoint egress, Tag marker,
                                   MacAddress markerMac, Optional<MacAddress> nextHop, boolean skipFirst,
                                   Map<DeviceId, Map<FlowId, InstalledRule>> rules) {
        int lastHop = lastProgrammable(from, path);
        PortNumber in = from.port();
        PortNumber firstOut = path.isEmpty() ? egress.port() : path.get(0).src().port();
        for (int i = 0; i <= path.size(); i++) {
            DeviceId dev = i == 0 ? from.deviceId() : path.get(i - 1).dst().deviceId();
            PortNumber out = i < path.size() ? path.get(i).src().port() : egress.port();
            boolean programmable = network.device(dev).map(n -> n.role().programmable()).orElse(false);
            if (programmable && !(skipFirst && i == 0)) {
                TrafficSelector.Builder sel = markerSelector(marker, markerMac).matchInPort(in);
                TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
                if (i == path.size() && marker.type() == TagType.VLAN) {
                    t.popVlan();
                }
                if (i == lastHop) {
                    nextHop.ifPresent(t::setEthDst);
                }
                add(rules, dev, Role.RETURN, RETURN_PRIORITY, sel, t.setOutput(out));
            }
            if (i < path.size()) {
                in = path.get(i).dst().port();
            }
        }
        return firstOut;
    }

    static TrafficSelector.Builder tagSelector(Tag tag) {
        TrafficSelector.Builder sel = DefaultTrafficSelector.builder();
        return tag.type() == TagType.VLAN ? sel.matchVlanId(VlanId.vlanId((short) tag.group()))
                : sel.matchEthDstMasked(tag.groupMac(), Tag.GROUP_MASK);
    }

    static TrafficSelector.Builder markerSelector(Tag marker, MacAddress markerMac) {
        TrafficSelector.Builder sel = DefaultTrafficSelector.builder();
        if (marker.type() == TagType.VLAN) {
            sel.matchVlanId(VlanId.vlanId((short) marker.group()));
        }
        return sel.matchEthDst(markerMac);
    }

    static TrafficTreatment.Builder tagTreatment(Tag tag, int classIndex) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        if (tag.type() == TagType.VLAN) {
            t.pushVlan().setVlanId(VlanId.vlanId((short) tag.group()));
        }
        return t.setEthDst(tag.classMac(classIndex));
    }

    void add(Map<DeviceId, Map<FlowId, InstalledRule>> rules, DeviceId device, Role role, int priority,
                     TrafficSelector.Builder sel, TrafficTreatment.Builder treatment) {
        TrafficSelector selector = sel.build();
        FlowRule rule = DefaultFlowRule.builder().forDevice(device).forTable(0).withPriority(priority)
                .withSelector(selector).withTreatment(treatment.build())
                .withCookie(FlowIds.of(appId, device, 0, priority, selector)).makePermanent().build();
        // two paths may share a hop: the same selector at the same priority is installed once
        InstalledRule before = rules.computeIfAbsent(device, k -> new LinkedHashMap<>())
                .putIfAbsent(rule.id(), new InstalledRule(role, rule));
        if (before != null && (before.rule().priority() != priority || !before.rule().selector().equals(selector))) {
            throw new MetronException(Fault.INTERNAL, "rules " + before.rule().selector() + " and " + selector
                    + " on " + device + " hash to the same flow id " + rule.id() + "; not installing either");
        }
    }
}
