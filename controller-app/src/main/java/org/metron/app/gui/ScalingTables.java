package org.metron.app.gui;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.rest.MetronText;
import org.metron.app.scaling.BlackBoxStatus;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.GroupLoad;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingService;
import org.onosproject.ui.table.TableModel;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/** The view's scaling tables: every chain's groups (server, tag, core, classes, load) and the decision history. */
final class ScalingTables {
    static final ViewTable GROUPS = new ViewTable("Group", "Groups: tags, cores, load", "No placed groups",
            ScalingTables::groups, "id", "", "chain", "Chain", "group", "Group", "server", "Server", "tag", "Tag",
            "core", "Core",
            "classes", "Classes", "load", "Load", "rate", "Packet rate");
    static final ViewTable HISTORY = new ViewTable("Scaling", "Scaling history (UTC)", "No scaling decisions yet",
            (m, s, t) -> history(s, t), "id", "", "at", "Time", "chain", "Chain", "kind", "Kind",
            "groups", "Groups", "cores", "Cores", "moved", "Moved classes", "outcome", "Outcome",
            "reactionMs", "Reaction (ms)", "steps", "Steps (ms)", "reason", "Reason");
    static final ViewTable FLOW_STATE = new ViewTable("FlowState",
            "Flow state shed (stateful elements whose table was full)", "No flow state shed",
            (m, s, t) -> flowState(s, t), "id", "", "at", "Time", "chain", "Chain", "group", "Group",
            "server", "Server", "element", "Element", "evicted", "Evicted", "refused", "Refused",
            "growthFailures", "Growths failed", "flows", "Flows held / capacity");

    static final ViewTable BLACK_BOXES = new ViewTable("BlackBox", "Black-box NFs (separate processes)",
            "No black-box NFs", (m, s, t) -> blackBoxes(s, t), "id", "", "chain", "Chain", "nf", "NF", "group", "Group",
            "server", "Server", "state", "State", "restarts", "Restarts", "packets",
            "Sent / returned / NF dropped / ring full", "failure", "Bypassed / dropped while down / lost with a dead instance", "idle",
            "Slept / woken", "lastExit", "Last exit");

    private ScalingTables() {
    }

    static void groups(MetronService m, ScalingService s, TableModel t) {
        for (Placement p : m.placements().stream().sorted(Comparator.comparing(Placement::chainId))
                .collect(Collectors.toList())) {
            Optional<ChainLoad> load = s.load(p.chainId());
            for (GroupAssignment g : p.groups()) {
                Optional<GroupLoad> l = load.flatMap(c -> c.groups().stream()
                        .filter(x -> x.groupId().equals(g.groupId())).findFirst());
                t.addRow().cell("id", p.chainId() + "/" + g.groupId()).cell("chain", p.chainId().name())
                        .cell("group", g.groupId()).cell("server", MetronText.server(p, g))
                        .cell("tag", MetronText.groupTag(g.tag()))
                        .cell("core", Integer.toString(g.core())).cell("classes", g.classesText())
                        .cell("load", l.map(GroupLoad::load).map(MetronText::percent).orElse(MetronText.NONE))
                        .cell("rate", l.map(x -> x.classRates().values().stream().mapToDouble(Double::doubleValue)
                                .sum()).map(MetronText::pps).orElse(MetronText.NONE));
            }
        }
    }

    static void history(ScalingService s, TableModel t) {
        s.history().values().stream().flatMap(List::stream).sorted(Comparator.comparingLong(ScalingEvent::atMs))
                .forEach(e -> t.addRow().cell("id", e.chain() + "@" + e.atMs() + "/" + e.kind())
                        .cell("at", MetronText.time(e.atMs())).cell("chain", e.chain().name())
                        .cell("kind", e.kind().name().toLowerCase(Locale.ROOT))
                        .cell("groups", String.join(" + ", e.groups()))
                        .cell("cores", MetronText.list(e.coresBefore()) + " -> " + MetronText.list(e.coresAfter()))
                        .cell("moved", MetronText.moved(e))
                        .cell("outcome", e.outcome().name() + (e.detail().isEmpty() ? "" : ": " + e.detail()))
                        .cell("reactionMs", Long.toString(e.reactionMs()))
                        .cell("steps", e.steps().isEmpty() ? MetronText.NONE : e.steps()).cell("reason", e.reason()));
    }

    /** Stateful elements that shed flows, newest first: what no flow table could hold must be seen. */
    static void flowState(ScalingService s, TableModel t) {
        s.flowStateAlerts().stream().sorted(Comparator.comparingLong(FlowStateAlert::atMs).reversed())
                .forEach(a -> t.addRow().cell("id", a.chain() + "@" + a.atMs() + "/" + a.element())
                        .cell("at", MetronText.time(a.atMs())).cell("chain", a.chain().name())
                        .cell("group", a.group()).cell("server", a.server().toString()).cell("element", a.element())
                        .cell("evicted", Long.toString(a.evicted())).cell("refused", Long.toString(a.refused()))
                        .cell("growthFailures", Long.toString(a.growthFailures()))
                        .cell("flows", a.flows() + " / " + a.capacity()));
    }

    /** The chains' black-box NFs: a FAILED one leaves its chain DEGRADED (docs/blackbox.md). */
    static void blackBoxes(ScalingService s, TableModel t) {
        for (BlackBoxStatus b : s.blackBoxes()) {
            BlackBoxStats x = b.stats();
            t.addRow().cell("id", b.chain() + "/" + b.group() + "/" + x.getElement()).cell("chain", b.chain().name())
                    .cell("nf", x.getNf() + " (" + x.getMode() + ", fail-" + x.getOnFailure().toLowerCase(Locale.ROOT) + ")")
                    .cell("group", b.group()).cell("server", b.server().toString()).cell("state", x.getState())
                    .cell("restarts", Long.toString(x.getRestarts()))
                    .cell("packets", x.getSent() + " / " + x.getReturned() + " / " + x.getNfDropped() + " / "
                            + x.getRingFull())
                    .cell("failure", x.getBypassed() + " / " + x.getFailedClosed() + " / " + x.getNfLost())
                    .cell("idle", x.getNfSleeps() + " / " + x.getNfWakeups())
                    .cell("lastExit", x.getLastExit().isEmpty() ? MetronText.NONE : x.getLastExit());
        }
    }
}
