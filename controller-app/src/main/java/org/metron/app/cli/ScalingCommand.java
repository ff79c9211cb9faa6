package org.metron.app.cli;

import org.metron.app.scaling.ChainScaling;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.rest.MetronText;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.GroupLoad;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingOperation;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Each chain's groups (tag, core, classes, latest load) and its history of scaling decisions
 * (docs/scaling.md#operator-view); the same content as GET /onos/metron/scaling with -j.
 */
@Service
@Command(scope = "onos", name = "metron-scaling",
        description = "Shows Metron chains' groups, tags, cores and scaling history")
public class ScalingCommand extends MetronCommand {
    @Argument(index = 0, name = "name", description = "chain name (all placed chains when absent)")
    @Completion(ChainNameCompleter.class)
    String name = null;


    @Override
    protected void run() {
        List<ChainId> ids = name != null ? List.of(ChainId.of(name))
                : metron().placements().stream().map(Placement::chainId).sorted().collect(Collectors.toList());
        if (name != null && metron().chain(ChainId.of(name)).isEmpty()) {
            error("no chain named '%s'", name);
            return;
        }
        for (ChainId id : ids) {
            if (outputJson()) {
                print("%s", jsonForEntity(ChainScaling.of(id, metron(), scaling()), ChainScaling.class));
                continue;
            }
            Optional<Placement> p = metron().placement(id);
            Optional<ChainLoad> load = scaling().load(id);
            String ops = scaling().inProgress().stream().filter(op -> op.chain().equals(id))
                    .map(ScalingCommand::describe)
                    .collect(Collectors.joining(", "));
            print("chain=%s cores=%s ingress=%s inProgress=%s", id,
                    p.map(Placement::cores).map(MetronText::list).orElse(MetronText.NONE),
                    scaling().ingressPps(id).map(MetronText::pps).orElse(MetronText.NONE),
                    ops.isEmpty() ? "none" : ops);
            for (GroupAssignment g : p.map(Placement::groups).orElse(List.of())) {
                String l = load.flatMap(c -> c.groups().stream().filter(x -> x.groupId().equals(g.groupId()))
                        .findFirst()).map(GroupLoad::load).map(MetronText::percent).orElse(MetronText.NONE);
                print("    group=%s server=%s tag=%s core=%d classes=%s load=%s", g.groupId(),
                        MetronText.server(p.get(), g), MetronText.groupTag(g.tag()), g.core(), g.classesText(), l);
            }
            for (ScalingEvent e : scaling().history(id)) {
                print("    %s %s %s cores %s -> %s moved %s %s reaction=%dms duration=%dms steps=[%s] %s%s",
                        MetronText.time(e.atMs()), e.kind().name().toLowerCase(Locale.ROOT),
                        String.join("+", e.groups()), MetronText.list(e.coresBefore()),
                        MetronText.list(e.coresAfter()), MetronText.moved(e), e.outcome(),
                        e.reactionMs(), e.durationMs(), e.steps(), e.reason(),
                        e.detail().isEmpty() ? "" : " (" + e.detail() + ")");
            }
            for (FlowStateAlert a : scaling().flowStateAlerts(id)) {
                print("    %s flow state shed: %s", MetronText.time(a.atMs()), a);
            }
        }
    }

    private static String describe(ScalingOperation op) {
        return op.kind() + " " + op.group() + "/" + op.other() + " at " + op.step();
    }
}
