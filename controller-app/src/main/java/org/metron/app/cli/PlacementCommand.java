package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.rest.MetronText;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Where chains run: server, NICs, offload device, and each group's tag and core. */
@Service
@Command(scope = "onos", name = "metron-placement", description = "Shows where Metron chains run")
public class PlacementCommand extends MetronCommand {
    @Argument(index = 0, name = "name", description = "chain name (all when absent)")
    @Completion(ChainNameCompleter.class)
    String name = null;

    @Override
    protected void run() {
        Collection<Placement> ps = name == null ? metron().placements() : new ArrayList<>(
                metron().placement(ChainId.of(name)).map(List::of).orElse(List.of()));
        if (name != null && ps.isEmpty()) {
            error("chain %s is not placed", name);
            return;
        }
        for (Placement p : ps) {
            if (outputJson()) {
                print("%s", jsonForEntity(p, Placement.class));
                continue;
            }
            print("chain=%s server=%s nic=%s egressNic=%s offload=%s profile=%s", p.chainId(),
                    MetronText.server(p), p.nic(), p.egressNic(), MetronText.offloadDevice(p), p.offloadProfile());
            for (GroupAssignment g : p.groups()) {
                print("    group=%s server=%s tag=%s core=%d classes=%s", g.groupId(), MetronText.server(p, g),
                        MetronText.groupTag(g.tag()), g.core(), MetronText.list(g.classIds()));
            }
        }
    }
}
