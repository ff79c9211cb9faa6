package org.metron.app.scaling;

import org.metron.app.api.Chain;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.impl.ReplyTraffic;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The switch paths between the offload device and a group on another server (RulePlanner#remotePath): what a
 * scale-out installs and what a merge back may remove without cutting a path another group still uses.
 */
final class RemotePaths {
    private static final Logger log = LoggerFactory.getLogger(RemotePaths.class);

    private final OperationRunner runner;

    RemotePaths(OperationRunner runner) {
        this.runner = runner;
    }

    /**
     * The rules that carry traffic to and from group {@code g} on another server and that nothing else of the
     * chain needs: its path's rules less those of the chain's own server and of its other groups elsewhere (the
     * return paths share their hops near the egress point). A lost server the registry no longer lists, or whose
     * cabling is gone (ONOS drops an unavailable device's links), has no path to plan: then only the transit rules
     * carrying {@code g}'s tag are known to be its own, and its return rules stay (they match frames only that
     * server sent).
     */
    List<InstalledRule> onlyFor(Ctx c, GroupAssignment g) {
        Placement p = c.placement.value();
        Optional<MetronServer> there = g.server().flatMap(runner.servers::server);
        String why = "is not registered";
        if (there.isPresent()) {
            try {
                return plannedOnlyFor(c, g, there.get());
            } catch (MetronException e) {
                // ONOS keeps an unavailable server's device but drops its links: no cabling to plan the path by
                why = "has no path to plan (" + e.getMessage() + ")";
            }
        }
        log.warn("Chain {}: server {} of group {} {}: its return rules stay", p.chainId(), g.server().orElse(null),
                g.groupId(), why);
        return c.installed.value().switchRules().stream()
                .filter(r -> r.role() == Role.TRANSIT && RuleRetagger.matchesGroup(r.rule(), g.tag()))
                .collect(Collectors.toList());
    }

    /** {@link #onlyFor} from the planned paths, {@code there} being {@code g}'s server with its cabling. */
    private List<InstalledRule> plannedOnlyFor(Ctx c, GroupAssignment g, MetronServer there) {
        Placement p = c.placement.value();
        Set<Object> shared = new HashSet<>();
        homePath(c).rules().forEach(r -> shared.add(r.rule().id()));
        p.groups().stream().filter(x -> x.remote() && !x.groupId().equals(g.groupId())).forEach(x -> pathTo(c,
                runner.remoteServer(x), x).rules().forEach(r -> shared.add(r.rule().id())));
        Set<Object> installed = c.installed.value().switchRules().stream().map(r -> r.rule().id())
                .collect(Collectors.toSet());
        return pathTo(c, there, g).rules().stream()
                .filter(r -> !shared.contains(r.rule().id()) && installed.contains(r.rule().id()))
                .collect(Collectors.toList());
    }

    /** The path a group on the chain's own server would have (its first group's tag): rules the chain holds. */
    RulePlanner.RemotePath homePath(Ctx c) {
        Placement p = c.placement.value();
        return pathTo(c, c.server, p.groups().get(0).onServer(c.server.id(), p.nic(), p.egressNic()));
    }

    /** The rules to and from group {@code g} on server {@code s} and the ports toward it (RulePlanner#remotePath). */
    RulePlanner.RemotePath pathTo(Ctx c, MetronServer s, GroupAssignment g) {
        Placement p = c.placement.value();
        return runner.planner().remotePath(p.chainId(), c.chain.deployment(), p.offloadDevice().orElseThrow(), s, g,
                p.groups().get(0).tag(), ReplyTraffic.of(c.compiled).present());
    }
}
