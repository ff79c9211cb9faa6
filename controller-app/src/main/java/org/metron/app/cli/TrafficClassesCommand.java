package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.ChainId;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.rest.MetronText;
import org.onosproject.net.flow.FlowRule;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Traffic classes with their group, tag and core, and under each its filter entries in first-match order: what
 * happens to an entry's packets and the switch rules it became.
 */
@Service
@Command(scope = "onos", name = "metron-tcs", description = "Lists traffic classes of Metron chains")
public class TrafficClassesCommand extends MetronCommand {
    @Argument(index = 0, name = "name", description = "chain name (all placed chains when absent)")
    @Completion(ChainNameCompleter.class)
    String name = null;

    @Override
    protected void run() {
        List<ChainId> ids = name != null ? List.of(ChainId.of(name))
                : metron().placements().stream().map(p -> p.chainId()).sorted().collect(Collectors.toList());
        for (ChainId id : ids) {
            for (TrafficClassInfo tc : metron().trafficClasses(id)) {
                if (outputJson()) {
                    print("%s", jsonForEntity(tc, TrafficClassInfo.class));
                    continue;
                }
                print("chain=%s class=%d %s group=%s tag=%s core=%s server=%s: %s", id, tc.classId(),
                        tc.disposition().name().toLowerCase(Locale.ROOT),
                        tc.groupId().isEmpty() ? MetronText.NONE : tc.groupId(),
                        MetronText.classTag(tc.tag(), tc.classId()),
                        tc.core() < 0 ? MetronText.NONE : Integer.toString(tc.core()),
                        MetronText.or(tc.server(), MetronText.NONE), tc.operations());
                for (TrafficClassInfo.Entry e : tc.entries()) {
                    print("    entry %d/%d: %s", e.index() + 1, tc.entries().size(), e.match());
                    print("        does: %s", MetronText.does(tc, e));
                    if (e.rules().isEmpty()) {
                        print("        rules: %s", MetronText.rules(e));
                    }
                    for (FlowRule f : e.rules()) {
                        print("        rule: %s", MetronText.rule(f));
                    }
                }
            }
        }
    }
}
