package org.metron.app.scaling;

import org.metron.app.api.Chain;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledState;
import org.metron.synth.CompiledChain;
import org.onosproject.store.service.Versioned;

import java.util.stream.Collectors;

/** What one operation needs to know about the chain, read once at its start. */
final class Ctx {

    final Chain chain;
    final Versioned<Placement> placement;
    final Versioned<InstalledState> installed;
    final MetronServer server;
    final CompiledChain compiled;

    Ctx(Chain chain, Versioned<Placement> placement, Versioned<InstalledState> installed, MetronServer server,
        CompiledChain compiled) {
        this.chain = chain;
        this.placement = placement;
        this.installed = installed;
        this.server = server;
        this.compiled = compiled;
    }

    GroupAssignment group(String id) {
        Placement p = placement.value();
        return p.group(id).orElseThrow(() -> new MetronException(Fault.INVALID_CHAIN, "chain " + p.chainId()
                + " has no group '" + id + "' (groups: " + p.groups().stream().map(GroupAssignment::groupId)
                .collect(Collectors.toList()) + ")"));
    }
}
