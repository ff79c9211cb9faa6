package org.metron.app.impl;

import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRecord;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * What an instance does for a chain it has just come to act for ({@link ChainManager#reconcile}): the instance
 * that acted for it may have stopped half-way. By the stored state:
 * <ul>
 *   <li>REMOVING: the removal continues (the operator's delete is never undone);</li>
 *   <li>SUBMITTED, SYNTHESIZED, PLACED: what may be installed is removed (the recorded installed state, and the
 *       pipeline and NIC rules of the stored placement, which the agent treats as gone when absent) and the chain
 *       is brought up again;</li>
 *   <li>DEPLOYED: ACTIVE when its agent reports the pipeline running, else as PLACED;</li>
 *   <li>DEGRADED: its server is checked: restored in place when its agent answers, else moved to another server
 *       when one can take it (else it stays DEGRADED);</li>
 *   <li>ACTIVE: nothing while its server answers or is still registered (the failover deadline's case); moved off
 *       a server no longer registered;</li>
 *   <li>FAILED, or no chain: nothing.</li>
 * </ul>
 * A chain with an update recorded (a PUT another instance took, or one its stopped owner was applying) is updated
 * first, once it is not being brought up ({@link ChainManager#applyUpdate}): applied, or refused with the error.
 * Before any of it, a failover move the previous owner readied and left recorded (it stopped during a lost server's
 * deadline) is taken back ({@link FailoverPreparation#takeBackLeft}).
 * Idempotent: a second call finds the chain in a settled state.
 */
final class ChainReconciler {
    private static final Logger log = LoggerFactory.getLogger(ChainReconciler.class);

    private final ChainManager chains;
    private final ChainStore store;
    private final ServerRegistry servers;
    private final ServerRecovery recovery;
    private final AgentCalls calls;

    ChainReconciler(ChainManager chains, ChainStore store, ServerRegistry servers, ServerRecovery recovery,
                    Duration timeout) {
        this.chains = Objects.requireNonNull(chains);
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.recovery = Objects.requireNonNull(recovery);
        this.calls = new AgentCalls(timeout);
    }

    String reconcile(ChainId id) {
        String[] done = {"another instance acts for it"};
        chains.whileLeading(id, () -> done[0] = rearm(id, reconcileLocked(id)));
        if (!done[0].startsWith("nothing")) {
            log.info("Chain {} reconciled: {}", id, done[0]);
        }
        return done[0];
    }

    /**
     * A chain left with its rules in the switches (ACTIVE, DEGRADED) whose backups this instance does not keep (it
     * started, or took the chain over): its backups are computed and armed now, in the background, adopting the
     * fast-failover groups the switches still hold for it and deleting its stale ones ({@link DataPlaneFailover}),
     * instead of waiting for the chain's next change.
     */
    private String rearm(ChainId id, String done) {
        if (!chains.unarmed(id)) {
            return done;
        }
        chains.refreshBackups(id);
        return (done.startsWith("nothing: ") ? done.substring("nothing: ".length()) : done)
                + "; its backups are computed and re-armed (groups read back from the switches)";
    }

    private String reconcileLocked(ChainId id) {
        // a failover move its previous owner readied and left (it stopped during the deadline) goes first: the
        // chain is then moved from scratch if its server is still lost, never deployed twice
        chains.takeBackLeftMove(id);
        Optional<Chain> stored = store.chains().get(id).map(Versioned::value);
        if (stored.isEmpty()) {
            return "nothing: no such chain";
        }
        Chain c = stored.get();
        Optional<DeviceId> server = store.placements().get(id).map(Versioned::value).flatMap(Placement::server);
        try {
            if (c.updatePending() && !c.markedForRemoval() && !c.state().bringingUp()
                    && c.state() != ChainState.DEPLOYED) {
                // the operator's PUT, taken by another instance or left by an owner that stopped mid-update
                return "update applied: " + chains.applyUpdate(id).state();
            }
            switch (c.state()) {
                case REMOVING:
                    return chains.finishRemoval(c).map(left -> "removal continues, left: " + left.pending())
                            .orElse("removed");
                case SUBMITTED:
                case SYNTHESIZED:
                case PLACED:
                    return bringUpAgain(c);
                case DEPLOYED:
                    if (pipelineRunning(id, server)) {
                        store.chains().put(id, c.withState(ChainState.ACTIVE, ""));
                        return "ACTIVE: its pipeline runs";
                    }
                    return bringUpAgain(c);
                case DEGRADED:
                    return checkServer(c, server.orElseThrow());
                case ACTIVE:
                    if (server.isEmpty() || servers.servers().stream().anyMatch(s -> s.id().equals(server.get()))) {
                        return "nothing: ACTIVE, its server registered";
                    }
                    return checkServer(c, server.get());
                default:
                    return "nothing: " + c.state();
            }
        } catch (MetronException e) {
            return "failed: " + e.getMessage();
        }
    }

    /** Removes what the chain may hold (recorded or not) and brings it up from its stored definition. */
    private String bringUpAgain(Chain c) {
        ChainId id = c.id();
        Optional<Placement> p = store.placements().get(id).map(Versioned::value);
        Optional<MetronServer> server = p.flatMap(Placement::server).flatMap(servers::server);
        boolean recorded = store.installedRecord(id).flatMap(InstalledRecord::server).isPresent();
        if (server.isPresent() && !recorded) {
            // deployed half-way by an instance that stopped before recording it: the agent's part by the placement
            AgentClient agent = server.get().agent();
            List<Long> nicRules = p.get().groups().isEmpty() ? List.of()
                    : AgentRequests.nicRules(id, p.get()).stream().map(org.metron.agent.v1.NicRule::getId)
                    .collect(Collectors.toList());
            quietly(AgentCalls.goneIsDone(agent.removePipeline(id.name())), "pipeline " + id + " on " + agent);
            if (!nicRules.isEmpty()) {
                quietly(AgentCalls.removeNicRulesPresent(agent, nicRules), "NIC rules of " + id + " on " + agent);
            }
        }
        Chain up = chains.bringUpAgain(c, "the instance acting for it stopped while it was " + c.state());
        return "brought up again from " + c.state() + ": " + up.state();
    }

    /** DEGRADED (or ACTIVE on a server gone from the registry): restored in place, moved, or left DEGRADED. */
    private String checkServer(Chain c, DeviceId serverId) {
        Optional<MetronServer> server = servers.server(serverId);
        if (server.isPresent() && answers(server.get())) {
            recovery.restore(server.get(), c.id()); // this chain only: its lock is held here
            ChainState now = store.chains().get(c.id()).map(Versioned::value).map(Chain::state).orElse(c.state());
            return "server " + serverId + " answers: " + now;
        }
        if (chains.moveOff(c.id(), serverId)) {
            return "moved off " + serverId;
        }
        return "server " + serverId + " does not answer: " + store.chains().get(c.id()).map(Versioned::value)
                .map(Chain::state).orElse(c.state());
    }

    private boolean answers(MetronServer s) {
        try {
            calls.await(AgentCalls.started(() -> s.agent().health()), "health of " + s.id());
            return true;
        } catch (MetronException e) {
            return false;
        }
    }

    private boolean pipelineRunning(ChainId id, Optional<DeviceId> serverId) {
        Optional<InstalledRecord> st = store.installedRecord(id);
        if (st.isEmpty()) {
            return false;
        }
        if (!st.get().pipeline()) {
            return true; // the switches handle it alone: installed is all there is
        }
        Optional<MetronServer> server = serverId.flatMap(servers::server);
        if (server.isEmpty()) {
            return false;
        }
        try {
            return calls.await(AgentCalls.started(() -> server.get().agent().listPipelines()),
                    "pipelines of " + server.get().id())
                    .getPipelinesList().stream().filter(p -> p.getPipelineId().equals(id.name()))
                    .map(PipelineStatus::getState).anyMatch(PipelineState.PIPELINE_RUNNING::equals);
        } catch (MetronException e) {
            return false;
        }
    }

    private void quietly(CompletableFuture<?> f, String what) {
        try {
            calls.await(f, "removing " + what);
        } catch (MetronException e) {
            log.warn("Reconcile: could not remove {}: {}", what, AgentCalls.reason(e));
        }
    }
}
