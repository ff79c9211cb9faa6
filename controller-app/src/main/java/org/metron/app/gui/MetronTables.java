package org.metron.app.gui;


import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.rest.MetronText;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingService;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.ui.table.TableModel;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * The tables of the Metron view, in the order shown: the ONOS GUI (through {@link MetronViewMessageHandler})
 * and the embedded dashboard fill them from here, so both read the same. The message handler only routes
 * requests here.
 */
public final class MetronTables {
    static final ViewTable CHAINS = new ViewTable("Chain", "Chains", "No chains", (m, s, t) -> chains(m, t),
            "name", "Chain", "state", "State", "ingress", "Ingress", "egress", "Egress", "tagType", "Tags",
            "cores", "Cores", "server", "Server", "pending", "Not running / left", "reason", "Reason");
    static final ViewTable CLASSES = new ViewTable("Class", "Traffic classes: entries in first-match order",
            "No traffic classes", (m, s, t) -> classes(m, t),
            "id", "", "chain", "Chain", "classId", "Class", "entry", "Entry", "match", "Match",
            "classified", "Classified at", "does", "What happens to its packets", "rules", "Switch rules");
    static final ViewTable PLACEMENTS = new ViewTable("Placement", "Placements", "No placed chains",
            (m, s, t) -> placements(m, t), "chain", "Chain", "server", "Server", "nics", "NICs (in, out)",
            "offload", "Offload device", "cores", "Cores", "groups", "Groups");
    static final ViewTable TAGS = new ViewTable("Tag", "Tags", "No tags allocated", (m, s, t) -> tags(m, t),
            "id", "", "server", "Server", "nic", "NIC", "tag", "Tag", "chain", "Chain", "group", "Group");
    static final ViewTable CORES = new ViewTable("Core", "Server cores", "No Metron servers",
            (m, s, t) -> cores(m, t), "id", "", "server", "Server", "core", "Core", "use", "Used by",
            "load", "Load");
    static final ViewTable NICS = new ViewTable("Nic", "Server NICs: how tags reach cores", "No Metron servers",
            (m, s, t) -> nics(m, t), "id", "", "server", "Server", "nic", "NIC", "dispatch", "Dispatch",
            "tags", "Tag types", "possible", "Possible modes", "capabilities", "Probed capabilities",
            "refused", "Refused");
    static final ViewTable RULES = new ViewTable("Rule", "Switch rules per chain and device",
            "No switch rules installed", (m, s, t) -> rules(m, t), "id", "", "chain", "Chain", "device", "Device",
            "role", "Role", "rules", "Rules", "packets", "Packets", "bytes", "Bytes");
    static final ViewTable PROBLEMS = new ViewTable("Problem", "Problems", "No problems",
            MetronTables::problems, "id", "", "what", "What", "subject", "Chain or server", "detail", "Detail");

    /** Every table, in the order the views show them. */
    public static final List<ViewTable> ALL = List.of(PROBLEMS, CHAINS, PLACEMENTS, TAGS, CORES, NICS,
            ScalingTables.GROUPS, ScalingTables.HISTORY, ScalingTables.FLOW_STATE, ScalingTables.BLACK_BOXES, RULES,
            CLASSES);

    private MetronTables() {
    }

    static void chains(MetronService m, TableModel t) {
        for (Chain c : m.chains()) {
            t.addRow().cell("name", c.id().name()).cell("state", c.state().name())
                    .cell("ingress", ingress(c.deployment()).toString())
                    .cell("egress", egress(c.deployment()).toString())
                    .cell("tagType", c.deployment().tagType().name().toLowerCase(Locale.ROOT))
                    .cell("cores", Integer.toString(c.deployment().cpuCores()))
                    .cell("server", m.placement(c.id()).map(MetronText::server).orElse("not placed"))
                    .cell("pending", c.pending().isEmpty() ? MetronText.NONE : MetronText.pending(c.pending()))
                    .cell("reason", c.reason().isEmpty() ? MetronText.NONE : c.reason());
        }
    }

    static void classes(MetronService m, TableModel t) {
        for (ChainId id : m.placements().stream().map(Placement::chainId).sorted().collect(Collectors.toList())) {
            List<TrafficClassInfo> tcs;
            try {
                tcs = m.trafficClasses(id);
            } catch (MetronException e) {
                continue; // removed since the placements were read
            }
            for (TrafficClassInfo tc : tcs) {
                for (TrafficClassInfo.Entry e : tc.entries()) {
                    t.addRow().cell("id", id + "/" + tc.classId() + "/" + e.index()).cell("chain", id.name())
                            .cell("classId", Integer.toString(tc.classId()))
                            .cell("entry", (e.index() + 1) + " of " + tc.entries().size())
                            .cell("match", e.match())
                            .cell("classified", e.classification().name().toLowerCase(Locale.ROOT))
                            .cell("does", MetronText.does(tc, e)).cell("rules", MetronText.rules(e));
                }
            }
        }
    }

    static void placements(MetronService m, TableModel t) {
        for (Placement p : m.placements().stream().sorted(Comparator.comparing(Placement::chainId))
                .collect(Collectors.toList())) {
            t.addRow().cell("chain", p.chainId().name()).cell("server", MetronText.server(p))
                    .cell("nics", p.server().isEmpty() ? MetronText.NONE
                            : p.nic().equals(p.egressNic()) ? p.nic() : p.nic() + ", " + p.egressNic())
                    .cell("offload", MetronText.offloadDevice(p) + " (" + p.offloadProfile() + ")")
                    .cell("cores", MetronText.list(p.cores()))
                    .cell("groups", p.groups().isEmpty() ? MetronText.NONE : p.groups().stream()
                            .map(MetronTables::group).collect(Collectors.joining("; ")));
        }
    }

    private static String group(GroupAssignment g) {
        return g.groupId() + ": " + MetronText.groupTag(g.tag()) + ", core " + g.core()
                + g.server().map(s -> " on " + s).orElse("");
    }

    static void tags(MetronService m, TableModel t) {
        m.tags().stream().sorted(Comparator.comparing((TagAllocation a) -> a.tag().group()))
                .forEach(a -> t.addRow().cell("id", a.server() + "/" + a.nic() + "/" + a.tag())
                        .cell("server", a.server().toString()).cell("nic", a.nic())
                        .cell("tag", MetronText.groupTag(a.tag())).cell("chain", a.chainId().name())
                        .cell("group", a.groupId()));
    }

    static void cores(MetronService m, TableModel t) {
        for (ServerInfo s : m.servers()) {
            if (!s.reachable()) {
                t.addRow().cell("id", s.id().toString()).cell("server", s.id().toString())
                        .cell("core", MetronText.NONE).cell("use", "unreachable: " + s.error())
                        .cell("load", MetronText.NONE);
                continue;
            }
            for (ServerInfo.CoreInfo c : s.cores()) {
                t.addRow().cell("id", s.id() + "/" + c.id()).cell("server", s.id().toString())
                        .cell("core", Integer.toString(c.id())).cell("use", MetronText.coreUse(c))
                        .cell("load", MetronText.percent(c.load()));
            }
        }
    }

    static void nics(MetronService m, TableModel t) {
        for (ServerInfo s : m.servers()) {
            for (ServerInfo.NicInfo n : s.nics()) {
                NicDispatch d = n.dispatch();
                t.addRow().cell("id", s.id() + "/" + n.name()).cell("server", s.id().toString())
                        .cell("nic", n.name() + (n.linkUp() ? "" : " (down)")).cell("dispatch", d.summary())
                        .cell("tags", MetronText.tagTypes(d)).cell("possible", MetronText.possibleModes(d))
                        .cell("capabilities", d.capabilitySummary()).cell("refused", MetronText.refusals(d));
            }
        }
    }

    /** Rule counts and counters summed per chain, device and role: thousands of rules stay one line each. */
    static void rules(MetronService m, TableModel t) {
        Map<List<String>, long[]> sums = new TreeMap<>(Comparator.comparing((List<String> k) -> String.join("/", k)));
        for (RuleInfo r : m.rules(null)) {
            // a device that could not be read shows as such, its counters unknown
            long[] s = sums.computeIfAbsent(List.of(r.chainId().name(), r.rule().deviceId().toString()
                    + (r.deviceRead() ? "" : " (unreadable: " + r.deviceError() + ")"),
                    r.role().name().toLowerCase(Locale.ROOT)), k -> new long[3]);
            s[0]++;
            s[1] = sum(s[1], r.packets());
            s[2] = sum(s[2], r.bytes());
        }
        sums.forEach((k, s) -> t.addRow().cell("id", String.join("/", k)).cell("chain", k.get(0))
                .cell("device", k.get(1)).cell("role", k.get(2)).cell("rules", Long.toString(s[0]))
                .cell("packets", MetronText.counter(s[1])).cell("bytes", MetronText.counter(s[2])));
    }

    /** A sum of counters that stays -1 (unknown) only while every part is. */
    private static long sum(long total, long part) {
        return part < 0 ? total : Math.max(total, 0) + part;
    }

    /**
     * What needs an operator: chains that failed, servers that do not answer, server netcfg entries ONOS refused,
     * scaling that did not complete, stateful elements that shed flows.
     */
    static void problems(MetronService m, ScalingService s, TableModel t) {
        for (Chain c : m.chains()) {
            if (c.state() == ChainState.FAILED) {
                t.addRow().cell("id", "chain/" + c.id()).cell("what", "chain failed").cell("subject", c.id().name())
                        .cell("detail", c.reason().isEmpty() ? MetronText.NONE : c.reason());
            } else if (c.state() == ChainState.DEGRADED) {
                t.addRow().cell("id", "chain/" + c.id()).cell("what", "chain degraded: its traffic does not flow")
                        .cell("subject", c.id().name()).cell("detail", MetronText.pending(c.pending()));
            } else if (c.markedForRemoval() && !c.pending().isEmpty()) {
                t.addRow().cell("id", "chain/" + c.id()).cell("what", "chain deleted, not removed yet")
                        .cell("subject", c.id().name()).cell("detail", MetronText.pending(c.pending()));
            }
        }
        for (ServerInfo srv : m.servers()) {
            if (!srv.reachable()) {
                t.addRow().cell("id", "server/" + srv.id()).cell("what", "agent unreachable")
                        .cell("subject", srv.id() + " (" + srv.agent() + ")").cell("detail", srv.error());
            }
        }
        for (ServerConfigErrors.Refused r : m.refusedServerConfigs()) {
            t.addRow().cell("id", "netcfg/" + r.device()).cell("what", "server netcfg refused")
                    .cell("subject", r.device().toString()).cell("detail", MetronText.refused(r));
        }
        s.history().values().stream().flatMap(List::stream).filter(e -> e.outcome() != ScalingEvent.Outcome.DONE)
                .sorted(Comparator.comparingLong(ScalingEvent::atMs))
                .forEach(e -> t.addRow().cell("id", "scaling/" + e.chain() + "@" + e.atMs())
                        .cell("what", e.kind().name().toLowerCase(Locale.ROOT) + " " + e.outcome().name()
                                .toLowerCase(Locale.ROOT).replace('_', ' ') + " at " + MetronText.time(e.atMs()))
                        .cell("subject", e.chain().name())
                        .cell("detail", e.detail().isEmpty() ? e.reason() : e.reason() + ": " + e.detail()));
        s.flowStateAlerts().forEach(a -> t.addRow().cell("id", "shed/" + a.chain() + "@" + a.atMs() + "/" + a.element())
                .cell("what", "flow state shed at " + MetronText.time(a.atMs())).cell("subject", a.chain().name())
                .cell("detail", a.toString()));
    }
}
