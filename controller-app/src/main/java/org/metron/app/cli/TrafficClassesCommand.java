package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.ChainId;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.rest.MetronJson;

import java.util.List;
import java.util.stream.Collectors;

/** Traffic classes with their group, tag and core. */
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
                    print("%s", MetronJson.trafficClass(tc));
                } else {
                    print("chain=%s class=%d group=%s tag=%s core=%d server=%s match=%s", id, tc.classId(),
                            tc.groupId().isEmpty() ? "-" : tc.groupId(), tc.tag() == null ? "-"
                                    : tc.tag().classMac(tc.classId()).toString().toLowerCase()
                                    + (tc.tag().type() == org.metron.app.api.TagType.VLAN ? " vlan " + tc.tag().group()
                                    : ""), tc.core(), tc.needsServer(), tc.match());
                }
            }
        }
    }
}
