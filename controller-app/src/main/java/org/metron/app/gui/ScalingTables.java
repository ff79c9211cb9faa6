package org.metron.app.gui;

import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.GroupLoad;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingService;
import org.onosproject.ui.table.TableModel;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** Fills the view's scaling tables: every chain's groups (tag, core, classes, load) and the decision history. */
final class ScalingTables {
    static final String[] GROUP_COLUMNS = {"id", "chain", "group", "tag", "core", "classes", "load"};
    static final String[] HISTORY_COLUMNS = {"id", "at", "chain", "kind", "groups", "cores", "moved", "outcome",
        "reactionMs", "steps", "reason"};
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);

    private ScalingTables() {
    }

    static void groups(MetronService m, ScalingService s, TableModel t) {
        for (Placement p : m.placements().stream().sorted(Comparator.comparing(Placement::chainId))
                .collect(Collectors.toList())) {
            Optional<ChainLoad> load = s.load(p.chainId());
            for (GroupAssignment g : p.groups()) {
                String l = load.flatMap(c -> c.groups().stream().filter(x -> x.groupId().equals(g.groupId()))
                        .findFirst()).map(GroupLoad::load)
                        .map(x -> String.format(Locale.ROOT, "%.0f%%", 100 * x)).orElse("-");
                t.addRow().cell("id", p.chainId() + "/" + g.groupId()).cell("chain", p.chainId().name())
                        .cell("group", g.groupId()).cell("tag", g.tag().toString()).cell("core", g.core())
                        .cell("classes", g.classIds().toString()).cell("load", l);
            }
        }
    }

    static void history(ScalingService s, TableModel t) {
        Map<ChainId, List<ScalingEvent>> all = s.history();
        all.values().stream().flatMap(List::stream).sorted(Comparator.comparingLong(ScalingEvent::atMs))
                .forEach(e -> t.addRow().cell("id", e.chain() + "@" + e.atMs() + "/" + e.kind())
                        .cell("at", TIME.format(Instant.ofEpochMilli(e.atMs()))).cell("chain", e.chain().name())
                        .cell("kind", e.kind().name().toLowerCase(Locale.ROOT))
                        .cell("groups", String.join(" + ", e.groups()))
                        .cell("cores", e.coresBefore() + " -> " + e.coresAfter()).cell("moved", e.moved().toString())
                        .cell("outcome", e.outcome().name()).cell("reactionMs", e.reactionMs())
                        .cell("steps", e.steps()).cell("reason", e.reason()));
        // stateful elements that shed flows are decisions an operator must see next to the scaling ones
        s.flowStateAlerts().forEach(a -> t.addRow().cell("id", a.chain() + "@" + a.atMs() + "/shed/" + a.element())
                .cell("at", TIME.format(Instant.ofEpochMilli(a.atMs()))).cell("chain", a.chain().name())
                .cell("kind", "flow state shed").cell("groups", a.group()).cell("cores", "-").cell("moved", "-")
                .cell("outcome", a.evicted() + " evicted, " + a.refused() + " refused").cell("reactionMs", "-")
                .cell("steps", "-").cell("reason", a.toString()));
    }
}
