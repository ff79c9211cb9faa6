package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ChainUpdate;
import org.metron.app.api.DrainReport.Move;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRecord;
import org.metron.app.store.InstalledState;
import org.metron.synth.TargetProfile;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A chain's update (PUT, docs/updates.md) for {@link ChainManager}: recording the operator's new definition with the
 * chain, applying it on the owner (make-before-break beside a running chain, tear-down and bring-up of one that
 * holds nothing, the old definition restored when the new one fails), and recording a refusal for whoever waits.
 * Kept apart from the manager, which holds the other operations, because the update path has its own rules of what
 * stays untouched when it is refused; it shares the manager's per-chain lock ({@link ChainStore#lockFor}).
 */
final class ChainUpdates {
    private static final Logger log = LoggerFactory.getLogger(ChainUpdates.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final Synthesis synthesis;
    private final ChainCompilers compilers;
    private final OwnerHandover handover;
    private final ChainBringUp bringUps;
    private final ChainTeardown teardown;
    private final AgentCalls calls;

    ChainUpdates(ChainStore store, ServerRegistry servers, Leadership leadership, PlacementEngine placement,
                 Synthesis synthesis, ChainCompilers compilers, OwnerHandover handover, ChainBringUp bringUps,
                 ChainTeardown teardown, Duration agentTimeout) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.leadership = Objects.requireNonNull(leadership);
        this.placement = Objects.requireNonNull(placement);
        this.synthesis = Objects.requireNonNull(synthesis);
        this.compilers = Objects.requireNonNull(compilers);
        this.handover = Objects.requireNonNull(handover);
        this.bringUps = Objects.requireNonNull(bringUps);
        this.teardown = Objects.requireNonNull(teardown);
        this.calls = new AgentCalls(agentTimeout);
    }

    /**
     * Updates a chain. The operator's new definition is first recorded with the chain, beside the one that runs
     * ({@link ChainUpdate}), by whichever instance takes the PUT; the chain's owner applies it ({@link #applyUpdate})
     * and an instance that does not own the chain waits for the outcome ({@link OwnerHandover#awaitUpdate}).
     * A running chain goes make-before-break (docs/updates.md): the new version is placed, deployed beside the
     * running one, takes the flow state of its unchanged elements, traffic moves at the switches, and the old version
     * is removed. When the new version cannot be placed or deployed, the running version and its record stay exactly
     * as they were, the update recorded as refused with the error. A chain that holds nothing (FAILED) is simply
     * brought up with the new definition; when that fails it stays FAILED as it was (its old definition, refused
     * before, is not brought up behind the error).
     */
    public Chain update(ChainId id, String json) {
        ParsedChain pc = ChainRequests.parse(json);
        if (!pc.id().equals(id)) {
            throw new MetronException(Fault.INVALID_CHAIN, "chain name '" + pc.id() + "' in the body differs "
                    + "from '" + id + "' in the request");
        }
        ChainCompiler compiler = new ChainCompiler(pc.spec(), synthesis); // cached once the owner runs it
        compiler.apply(TargetProfile.NONE); // bad Click is refused where the PUT arrives, whoever owns the chain
        synchronized (store.lockFor(id)) {
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                // a chain no instance has is unknown (404) wherever it is asked for
                Versioned<Chain> old = store.chains().get(id).orElseThrow(() -> ChainManager.unknown(id));
                if (old.value().markedForRemoval()) {
                    throw ChainRemoval.refusal(old.value(), "updated");
                }
                Chain asked = old.value().withUpdate(Optional.of(new ChainUpdate(pc.json(), pc.deployment())));
                if (!store.chains().replace(id, old.version(), asked)) {
                    throw new MetronException(Fault.INVALID_REQUEST, "chain " + id + " changed while it was being "
                            + "updated; retry PUT");
                }
                if (!leadership.actsFor(id)) {
                    return handover.awaitUpdate(asked); // recorded: its owner applies it
                }
                try {
                    return runUpdate(asked, asked.update().orElseThrow(), compiler);
                } catch (MetronException e) {
                    if (e.fault() == Fault.NOT_LEADER) {
                        // this instance lost the chain meanwhile (an agent refused its term): the update stays recorded
                        // and its owner applies it
                        log.warn("Update of {}: {}; left to its owner", id, e.getMessage());
                        return handover.awaitUpdate(asked);
                    }
                    // the operator hears the refusal from this call and nobody else waits for it: the record is put
                    // back as it was before the PUT, version included (unless something else has changed it
                    // meanwhile)
                    store.chains().get(id).map(Versioned::value).filter(asked::equals)
                            .ifPresent(c -> store.chains().put(id, old.value()));
                    throw e;
                }
            }
        }
    }

    /**
     * Moves a running chain to another server with its definition unchanged, make-before-break as an update
     * (docs/failover.md#planned-restart-drain): to {@code to} when given, else wherever placement puts it (a
     * drained server is not among the choices). Refused with the chain untouched when it cannot run there, when it
     * holds nothing to move, when an update of it is pending, or when another instance owns it (a move is asked of
     * the chain's owner: it names no version the owner could apply later).
     *
     * @param why           begins the chain's reason ("moved off drained server metron:srv1")
     * @param dropFailover takes back a failover move readied for the chain (its server was suspected: a loaded agent
     *                     answering late), run under the chain's lock before placing: the operator's move supersedes
     *                     it, and the readied one holds a core the move may need (seen at rate: the drain found "0 free
     *                     cores" on the only other server, held by the readied move of the same chain)
     * @return the move: from the server it ran on to the one it runs on, the chain's reason after it
     */
    Move move(ChainId id, Optional<DeviceId> to, String why, Runnable dropFailover) {
        synchronized (store.lockFor(id)) {
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                Chain old = existing(id);
                if (old.markedForRemoval()) {
                    throw ChainRemoval.refusal(old, "moved");
                }
                if (!leadership.actsFor(id)) {
                    throw new MetronException(Fault.NOT_LEADER, "chain " + id + " not moved: another controller "
                            + "instance owns it; ask that one");
                }
                Optional<InstalledState> running = store.installed().get(id).map(Versioned::value);
                Optional<Placement> placed = store.placement(id);
                if (old.updatePending() || running.isEmpty() || placed.isEmpty()) {
                    throw new MetronException(Fault.INVALID_REQUEST, "chain " + id + " not moved: "
                            + (old.updatePending() ? "an update of it is pending" : "it runs nowhere (" + old.state()
                            + ")") + "; nothing was changed");
                }
                Optional<MetronServer> target = to.map(t -> servers.server(t).orElseThrow(() -> new MetronException(
                        Fault.INVALID_REQUEST, "chain " + id + " not moved: server " + t + " is not registered")));
                requireAgentAnswers(old);
                dropFailover.run();
                Chain next = old.withDefinition(old.json(), old.deployment());
                DeviceId from = placed.get().server().orElseThrow();
                try {
                    Chain moved = bringUps.bringUpBeside(old, next, compilers.of(old), running.get(), placed.get(),
                            target, why);
                    return new Move(id, "chain", from, store.placement(id).flatMap(Placement::server).orElse(from),
                            moved.reason());
                } catch (MetronException e) {
                    if (e.fault() != Fault.NOT_LEADER) {
                        store.chains().put(id, old); // the running version, its record included, is untouched
                    }
                    throw e;
                }
            }
        }
    }

    /**
     * Applies the update recorded with the chain, if any (its owner reconciling it: the instance that took the
     * PUT did not own the chain, or its owner stopped mid-update); caller holds the lock.
     */
    Chain applyUpdate(ChainId id) {
        Chain c = existing(id);
        if (!c.updatePending() || c.markedForRemoval()) {
            return c;
        }
        ChainCompiler compiler;
        try {
            compiler = new ChainCompiler(ChainRequests.parse(c.update().get().json()).spec(), synthesis); // as PUT
        } catch (MetronException e) {
            refuse(id, c.update().get(), e);
            throw e;
        }
        return applyUpdate(c, compiler);
    }

    /** {@link #update} on the owner, {@code asked} recorded with its update; caller holds the lock. */
    private Chain applyUpdate(Chain asked, ChainCompiler compiler) {
        ChainUpdate u = asked.update().orElseThrow();
        try {
            return runUpdate(asked, u, compiler);
        } catch (MetronException e) {
            if (e.fault() != Fault.NOT_LEADER) { // else the update stays pending for the chain's owner
                refuse(asked.id(), u, e);
            }
            throw e;
        }
    }

    /** Records that the owner refused {@code u} (the chain runs its previous definition), for whoever waits. */
    private void refuse(ChainId id, ChainUpdate u, MetronException e) {
        store.chains().get(id).map(Versioned::value).filter(c -> !c.markedForRemoval())
                .ifPresent(c -> store.chains().put(id, c.withUpdate(Optional.of(u.refused(e)))));
    }

    private Chain runUpdate(Chain old, ChainUpdate u, ChainCompiler compiler) {
        ChainId id = old.id();
        requireAgentAnswers(old);
        Chain next = old.withDefinition(u.json(), u.deployment());
        Optional<InstalledState> running = store.installed().get(id).map(Versioned::value);
        Optional<Placement> placed = store.placement(id);
        if (running.isPresent() && placed.isPresent()) {
            try {
                return bringUps.bringUpBeside(old, next, compiler, running.get(), placed.get());
            } catch (MetronException e) {
                if (e.fault() == Fault.NOT_LEADER) {
                    throw e; // the chain's record is its new owner's to write
                }
                keepRecord(old, e); // the running version, its record included, is untouched
                log.warn("Update of {} to version {} refused, version {} runs on: {}", id, next.version(),
                        old.version(), e.getMessage());
                throw e;
            }
        }
        teardown.tearDown(old);
        store.chains().put(id, next);
        try {
            return bringUps.bringUp(next, compiler, placement);
        } catch (MetronException e) {
            if (old.state() == ChainState.FAILED) {
                // it ran nothing before the PUT: it stays FAILED as it was. Bringing its refused definition up now
                // would leave a chain running that no accepted request asked for, behind the error this PUT answers
                keepRecord(old, e);
                log.warn("Update of FAILED chain {} refused ({}); it stays FAILED", id, e.getMessage());
                throw e;
            }
            // the new definition could not run: bring the old one back
            log.warn("Update of {} failed ({}), restoring the previous definition", id, e.getMessage());
            Chain restore = next.withDefinition(old.json(), old.deployment());
            store.chains().put(id, restore);
            try {
                bringUps.bringUp(restore, compilers.of(restore), placement);
            } catch (MetronException again) {
                log.warn("Restoring {} failed too: {}", id, again.getMessage());
            }
            throw e;
        }
    }

    /** Puts back the chain's record from before a refused update, unless this node lost the chain meanwhile. */
    private void keepRecord(Chain old, MetronException e) {
        if (e.fault() != Fault.NOT_LEADER) { // else the chain's record is its new owner's to write
            store.chains().put(old.id(), old);
        }
    }

    /**
     * An update tears the running chain down before it brings the new definition up: with its agent down it
     * could do neither, nor restore the old one, so it is refused while the running chain is still whole.
     */
    private void requireAgentAnswers(Chain chain) {
        Optional<DeviceId> serverId = store.installedRecord(chain.id()).flatMap(InstalledRecord::server);
        if (serverId.isEmpty()) {
            return;
        }
        MetronServer server = servers.server(serverId.get()).orElseThrow(() -> new MetronException(
                Fault.AGENT_FAILURE, "chain " + chain.id() + " not updated: its server " + serverId.get()
                + " is no longer registered; the running chain is untouched"));
        try {
            calls.await(server.agent().health(), "health of " + server.id());
        } catch (MetronException e) {
            throw new MetronException(Fault.AGENT_FAILURE, "chain " + chain.id() + " not updated: the agent "
                    + server.agent().target() + " of " + server.id() + " does not answer (" + AgentCalls.reason(e)
                    + "); the running chain is untouched", e);
        }
    }

    private Chain existing(ChainId id) {
        return store.chains().get(id).map(Versioned::value).orElseThrow(() -> ChainManager.unknown(id));
    }
}
