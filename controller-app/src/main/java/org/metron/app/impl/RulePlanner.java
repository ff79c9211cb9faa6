package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.NetworkView;
import org.metron.app.store.InstalledRule;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.HeaderWrite;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.TrafficClass;
import org.metron.synth.hs.RuleSpace;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Supplier;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;
import static org.metron.app.impl.PathRules.cabled;
import static org.metron.app.impl.PathRules.tagSelector;
import static org.metron.app.impl.PathRules.tagTreatment;

/**
 * Builds a chain's {@link DeploymentPlan} from its placement: offload rules on the offload device at
 * priorities that keep the synthesizer's first-match order, transit rules along the path to the server,
 * return rules from the server (and from the offload device, for classes that need no server) to the egress
 * point, NIC rules tag → queue, and the pipeline request. A chain with a reply ingress also gets its reply
 * rules where replies enter (the egress point), transit rules from there to the server NIC the pipeline reads
 * (same group tags, so a reply reaches the core holding its flow's state) and reply return rules from the
 * server to the ingress point, matching the reply marker. The last hop toward either point writes the next
 * host's MAC over the marker ({@link NextHops}). The rules of one path are built by {@link PathRules}; the
 * pipeline and NIC-rule requests by {@link AgentRequests}. Pure: touches no device.
 */
public final class RulePlanner {
    /** Lowest priority of offload rules; rule k of n distinct levels gets OFFLOAD_BASE + (n - 1 - k). */
    public static final int OFFLOAD_BASE = 1000;
    /** Priority of a chain's default drop (its lowest rules when they all drop, {@link RuleSpace#defaultDropLevel}). */
    public static final int DEFAULT_DROP_PRIORITY = OFFLOAD_BASE - 1;
    /** Highest priority an offload rule may get. */
    public static final int OFFLOAD_MAX = 59_999;
    /** Forwards tagged traffic toward the server. */
    public static final int TRANSIT_PRIORITY = 60_000;
    /** Forwards the chain's output toward its egress; above transit because the egress marker also carries
     *  the group bits that transit rules match. */
    public static final int RETURN_PRIORITY = 61_000;
    /** Carries all ingress traffic through programmable devices before the offload device. */
    public static final int PRE_TRANSIT_PRIORITY = 100;

    private final ApplicationId appId;
    private final NetworkView network;
    private final PathRules paths;

    public RulePlanner(ApplicationId appId, NetworkView network) {
        this.appId = Objects.requireNonNull(appId);
        this.network = Objects.requireNonNull(network);
        this.paths = new PathRules(appId, network);
    }

    /** The application the planned rules belong to (their ids depend on it). */
    ApplicationId appId() {
        return appId;
    }

    /** The same planner over another view of the network (a failure precomputed: {@link NetworkWithout}). */
    RulePlanner over(NetworkView view) {
        return new RulePlanner(appId, view);
    }

    /** Rules the offload device must hold for a compiled chain (at least the catch-all to software). */
    static int offloadRuleCount(CompiledChain c) {
        return Math.max(1, c.offloadRules().size());
    }

    /**
     * Maps synthesizer priorities (higher wins, equal = disjoint) to OpenFlow priorities preserving both the
     * order and the equalities.
     *
     * @return one priority per rule, same order as {@code rules}
     */
    static int[] priorities(List<OffloadRule> rules) {
        TreeSet<Integer> levels = new TreeSet<>();
        rules.forEach(r -> levels.add(r.priority()));
        if (levels.size() > OFFLOAD_MAX - OFFLOAD_BASE + 1) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, levels.size() + " distinct rule priorities "
                    + "exceed the " + (OFFLOAD_MAX - OFFLOAD_BASE + 1) + " OpenFlow priorities Metron uses");
        }
        Map<Integer, Integer> rank = new HashMap<>();
        int i = 0;
        for (int level : levels) {
            rank.put(level, OFFLOAD_BASE + i++);
        }
        // a default drop goes below every chain's rules: where chains share an ingress point, it must not take the
        // other chains' traffic (it is the same entry for all of them)
        RuleSpace.defaultDropLevel(rules).ifPresent(level -> rank.put(level, DEFAULT_DROP_PRIORITY));
        int[] out = new int[rules.size()];
        for (int k = 0; k < rules.size(); k++) {
            out[k] = rank.get(rules.get(k).priority());
        }
        return out;
    }

    /**
     * Builds the plan.
     *
     * @param server   the server running the groups; empty for a fully offloaded chain (no groups)
     * @param nicRules whether the server NIC has a rule table for tag → queue rules
     * @param marker   the tag whose egress MAC (and VLAN) marks the chain's output toward its egress point
     */
    public DeploymentPlan plan(ChainId chain, Deployment d, Placement placement, Optional<MetronServer> server,
                               boolean nicRules, OffloadChoice offload, Tag marker) {
        CompiledChain compiled = offload.compiled();
        ReplyTraffic replies = ReplyTraffic.of(compiled);
        if (replies.present() && ingress(d).equals(egress(d))) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + " has a reply ingress but its "
                    + "ingress and egress point are both " + ingress(d) + ": replies could not be told from "
                    + "forward traffic");
        }
        if (server.isEmpty() && !compiled.groups().isEmpty()) {
            throw new MetronException(Fault.INTERNAL, "chain " + chain + " has server groups but no server");
        }
        NextHops hops = NextHops.of(chain, d, replies.present(), network);
        ConnectPoint attachment = server.map(s -> cabled(s, placement.nic())).orElse(null);
        ConnectPoint egressAttachment = server.map(s -> cabled(s, placement.egressNic())).orElse(null);
        Map<Integer, GroupAssignment> byClass = new HashMap<>();
        GroupAssignment classifier = null;
        for (int g = 0; g < compiled.groups().size(); g++) {
            ClassGroup cg = compiled.groups().get(g);
            GroupAssignment ga = placement.groups().get(g);
            cg.classIds().forEach(c -> byClass.put(c, ga));
            if (cg.classifies()) {
                classifier = ga;
            }
        }

        List<Link> path = offload.path();
        List<DeviceId> devices = new ArrayList<>();
        devices.add(ingress(d).deviceId());
        path.forEach(l -> devices.add(l.dst().deviceId()));
        int pos = offload.position();
        Map<DeviceId, Map<FlowId, InstalledRule>> rules = new LinkedHashMap<>();

        // return path first, then transit from the server backwards: downstream exists before upstream sends
        if (egressAttachment != null) {
            paths.returnRules(egressAttachment, paths.returnPath(egressAttachment, egress(d)), egress(d), marker,
                    marker.egressMac(), hops.toward(false), false, rules);
        }
        if (replies.present() && attachment != null) {
            paths.returnRules(attachment, paths.returnPath(attachment, ingress(d)), ingress(d), marker,
                    marker.replyEgressMac(), hops.toward(true), false, rules);
        }
        // without a server the path runs on to the egress point and no tag travels it
        for (int i = devices.size() - 1; attachment != null && i > pos; i--) {
            PortNumber in = path.get(i - 1).dst().port();
            PortNumber out = i < devices.size() - 1 ? path.get(i).src().port() : attachment.port();
            for (GroupAssignment ga : placement.groups()) {
                paths.add(rules, devices.get(i), Role.TRANSIT, TRANSIT_PRIORITY, tagSelector(ga.tag()).matchInPort(in),
                        DefaultTrafficTreatment.builder().setOutput(out));
            }
        }
        for (int i = pos - 1; i >= 0; i--) {
            if (network.device(devices.get(i)).map(n -> n.role().programmable()).orElse(false)) {
                PortNumber in = i == 0 ? ingress(d).port() : path.get(i - 1).dst().port();
                paths.add(rules, devices.get(i), Role.TRANSIT, PRE_TRANSIT_PRIORITY,
                        DefaultTrafficSelector.builder().matchInPort(in),
                        DefaultTrafficTreatment.builder().setOutput(path.get(i).src().port()));
            }
        }

        DeviceId replyDevice = replies.present()
                ? replyRules(chain, d, compiled, replies, attachment, placement, byClass, classifier, marker, hops,
                        rules)
                : null;

        // offload device, last
        DeviceId od = devices.get(pos);
        PortNumber arrival = pos == 0 ? ingress(d).port() : path.get(pos - 1).dst().port();
        PortNumber towardServer = pos < devices.size() - 1 ? path.get(pos).src().port()
                : attachment != null ? attachment.port() : null;
        List<OffloadRule> offloadRules = compiled.offloadRules();
        if (offloadRules.isEmpty()) {
            if (classifier == null) {
                throw new MetronException(Fault.INTERNAL, "chain " + chain + " has no offload rules and no "
                        + "classifying group");
            }
            paths.add(rules, od, Role.OFFLOAD, OFFLOAD_BASE, DefaultTrafficSelector.builder().matchInPort(arrival),
                    tagTreatment(classifier.tag(), Tag.UNCLASSIFIED_CLASS).setOutput(towardServer));
        } else {
            int[] prio = priorities(offloadRules);
            ConnectPoint from = new ConnectPoint(od, arrival);
            for (int k = 0; k < offloadRules.size(); k++) {
                OffloadRule r = offloadRules.get(k);
                int index = k;
                // built only for an error message: toString of thousands of rules is not free
                Supplier<String> where = () -> "chain " + chain + " offload rule " + index + " (" + r + ")";
                TrafficSelector.Builder sel = DefaultTrafficSelector.builder().matchInPort(arrival);
                OffloadRuleTranslator.match(r.match(), sel, where);
                paths.add(rules, od, Role.OFFLOAD, prio[k], sel, treatment(r, where, byClass, classifier, marker, hops,
                        towardServer, from, d, replies, rules));
            }
        }
        // the reply device's batch just before the offload device's, which is installed last: replies exist only
        // once forward traffic is tagged
        if (replyDevice != null && !replyDevice.equals(od)) {
            rules.put(replyDevice, rules.remove(replyDevice));
        }
        Map<FlowId, InstalledRule> last = rules.remove(od);
        rules.put(od, last);
        Map<DeviceId, List<InstalledRule>> ordered = new LinkedHashMap<>();
        rules.forEach((dev, byId) -> ordered.put(dev, new ArrayList<>(byId.values())));

        return new DeploymentPlan(chain, server, ordered,
                server.isPresent() && nicRules ? AgentRequests.nicRules(chain, placement) : List.of(),
                server.isPresent() ? AgentRequests.pipeline(chain, placement, compiled, marker) : null);
    }

    /**
     * Adds the reply rules on the egress point's device (they match what arrives on the egress port) and the
     * transit rules carrying tagged replies from there to the server NIC the pipeline reads.
     *
     * @return the reply device
     */
    private DeviceId replyRules(ChainId chain, Deployment d, CompiledChain compiled, ReplyTraffic replies,
                                ConnectPoint attachment, Placement placement, Map<Integer, GroupAssignment> byClass,
                                GroupAssignment classifier, Tag marker, NextHops hops,
                                Map<DeviceId, Map<FlowId, InstalledRule>> rules) {
        ConnectPoint entry = egress(d);
        DeviceId rd = entry.deviceId();
        if (!network.device(rd).map(n -> n.role().programmable()).orElse(false)) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + " has a reply ingress but its "
                    + "egress point " + entry + " is on a device that cannot hold flow rules: replies entering "
                    + "there cannot be classified");
        }
        PortNumber towardServer = null;
        if (attachment != null) {
            List<Link> path = network.path(entry, attachment).orElseThrow(() -> new MetronException(
                    Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": no path for replies from egress point " + entry
                    + " to server NIC " + placement.nic() + " at " + attachment));
            towardServer = paths.transitRules(path, attachment, placement.groups(), rules);
        }
        List<OffloadRule> replyRules = compiled.replyRules();
        if (replyRules.isEmpty()) {
            // a profile that offloads nothing: every reply goes to the classifying group's reply classifier
            if (classifier == null || towardServer == null) {
                throw new MetronException(Fault.INTERNAL, "chain " + chain + " has a reply ingress, no reply rules "
                        + "and no classifying group");
            }
            paths.add(rules, rd, Role.REPLY, OFFLOAD_BASE, DefaultTrafficSelector.builder().matchInPort(entry.port()),
                    tagTreatment(classifier.tag(), Tag.REPLY_UNCLASSIFIED_CLASS).setOutput(towardServer));
            return rd;
        }
        int[] prio = priorities(replyRules);
        for (int k = 0; k < replyRules.size(); k++) {
            OffloadRule r = replyRules.get(k);
            int index = k;
            Supplier<String> where = () -> "chain " + chain + " reply rule " + index + " (" + r + ")";
            TrafficSelector.Builder sel = DefaultTrafficSelector.builder().matchInPort(entry.port());
            OffloadRuleTranslator.match(r.match(), sel, where);
            paths.add(rules, rd, Role.REPLY, prio[k], sel,
                    treatment(r, where, byClass, classifier, marker, hops, towardServer, entry, d, replies, rules));
        }
        return rd;
    }


    private TrafficTreatment.Builder treatment(OffloadRule r, Supplier<String> where, Map<Integer, GroupAssignment> byClass,
                                               GroupAssignment classifier, Tag marker, NextHops hops,
                                               PortNumber towardServer,
                                               ConnectPoint from, Deployment d, ReplyTraffic replies,
                                               Map<DeviceId, Map<FlowId, InstalledRule>> rules) {
        RuleAction a = r.action();
        switch (a.type()) {
            case DROP:
                return DefaultTrafficTreatment.builder().drop();
            case TO_SERVER: {
                int cls = a.classId();
                GroupAssignment ga = cls == TrafficClass.UNCLASSIFIED || cls == TrafficClass.REPLY_UNCLASSIFIED
                        ? classifier : byClass.get(cls);
                if (ga == null || towardServer == null) {
                    throw new MetronException(Fault.INTERNAL, where.get() + ": class " + cls + " is in no placed group");
                }
                return tagTreatment(ga.tag(), cls).setOutput(towardServer);
            }
            case TO_EGRESS: {
                // a reply egress leads back to the ingress point, under the reply marker
                boolean reply = replies.isReplyEgress(a.egress());
                MacAddress markerMac = reply ? marker.replyEgressMac() : marker.egressMac();
                ConnectPoint to = reply ? ingress(d) : egress(d);
                List<Link> path = paths.returnPath(from, to);
                TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
                // the marker (or, when no rule follows this one, the next host's MAC) first: a rule's own dst MAC
                // write (rare) then wins and the path rules don't apply
                if (paths.lastProgrammable(from, path) == 0) {
                    t.setEthDst(hops.toward(reply).orElse(markerMac));
                } else {
                    if (marker.type() == TagType.VLAN) {
                        t.pushVlan().setVlanId(VlanId.vlanId((short) marker.group()));
                    }
                    t.setEthDst(markerMac);
                }
                int proto = r.match().ipProto().orElse(-1);
                for (HeaderWrite w : a.writes()) {
                    OffloadRuleTranslator.write(w, proto, t, where);
                }
                if (a.decTtl()) {
                    t.decNwTtl();
                }
                PortNumber out = paths.returnRules(from, path, to, marker, markerMac, hops.toward(reply), true, rules);
                return t.setOutput(out);
            }
            default:
                throw new MetronException(Fault.INTERNAL, where.get() + ": unknown action " + a.type());
        }
    }


    /**
     * The rules that connect a group scaled out to another server (docs/scaling.md#scale-out): TRANSIT rules for
     * its tag from the offload device to the server's NIC (on every programmable device after the offload
     * device; the offload device's own rules output toward it), and RETURN rules carrying the chain's marked
     * output from the server's egress NIC to the egress point, as a deployment there would install. A chain with a
     * reply ingress also gets the reply path a deployment there would have: TRANSIT rules for the tag from the
     * egress point (where replies enter, classified by the reply rules) to the server's NIC, and RETURN rules
     * carrying the restored replies (the reply marker) from that NIC to the ingress point.
     *
     * @param replies whether the chain has a reply ingress
     * @return the rules (server side first) and the ports the offload and reply rules leave toward the server by
     */
    public RemotePath remotePath(ChainId chain, Deployment d, DeviceId offloadDevice, MetronServer remote,
                                 GroupAssignment ga, Tag marker, boolean replies) {
        ConnectPoint attachment = cabled(remote, ga.nic());
        ConnectPoint egressAttachment = cabled(remote, ga.egressNic());
        Map<DeviceId, Map<FlowId, InstalledRule>> rules = new LinkedHashMap<>();
        NextHops hops = NextHops.of(chain, d, replies, network);
        paths.returnRules(egressAttachment, paths.returnPath(egressAttachment, egress(d)), egress(d), marker,
                marker.egressMac(), hops.toward(false), false, rules);
        if (replies) {
            // the server's pipeline sends restored replies out of the NIC it reads (AgentRequests#pipeline)
            paths.returnRules(attachment, paths.returnPath(attachment, ingress(d)), ingress(d), marker,
                    marker.replyEgressMac(), hops.toward(true), false, rules);
        }
        List<Link> path = network.path(new ConnectPoint(offloadDevice, PortNumber.ANY), attachment)
                .orElseThrow(() -> new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": no path "
                        + "from offload device " + offloadDevice + " to server " + remote.id() + " NIC " + ga.nic()));
        PortNumber toward = paths.transitRules(path, attachment, List.of(ga), rules);
        PortNumber replyToward = null;
        if (replies) {
            List<Link> back = network.path(egress(d), attachment).orElseThrow(() -> new MetronException(
                    Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": no path for replies from egress point "
                    + egress(d) + " to server " + remote.id() + " NIC " + ga.nic()));
            replyToward = paths.transitRules(back, attachment, List.of(ga), rules);
        }
        List<InstalledRule> out = new ArrayList<>();
        rules.values().forEach(m -> out.addAll(m.values()));
        return new RemotePath(out, toward, Optional.ofNullable(replyToward));
    }

    /** Rules to and from a scaled-out group's server, and the ports its offload and reply rules leave by. */
    public static final class RemotePath {
        private final List<InstalledRule> rules;
        private final PortNumber towardServer;
        private final Optional<PortNumber> replyTowardServer;

        RemotePath(List<InstalledRule> rules, PortNumber towardServer, Optional<PortNumber> replyTowardServer) {
            this.rules = List.copyOf(rules);
            this.towardServer = towardServer;
            this.replyTowardServer = replyTowardServer;
        }

        public List<InstalledRule> rules() {
            return rules;
        }

        /**
         * The port rules of {@code role} tagging for the group leave their device by toward its server: the offload
         * device's for OFFLOAD rules, the egress point's device's for REPLY rules.
         *
         * @throws MetronException INTERNAL for a reply rule when the path was planned without replies
         */
        public PortNumber towardServer(Role role) {
            if (role != Role.REPLY) {
                return towardServer;
            }
            return replyTowardServer.orElseThrow(() -> new MetronException(Fault.INTERNAL, "a reply rule toward a "
                    + "server whose path was planned for a chain without a reply ingress"));
        }
    }
}
