package org.metron.app.impl;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRecord;
import org.metron.app.store.InstalledState;
import org.metron.drivers.agent.AgentClient;
import org.metron.synth.CompiledChain;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Gives a server back what the store says it runs and its agent no longer holds (the agent restarted and lost
 * its pipelines and NIC rules): the same pipeline (groups, tags, cores) and NIC rules with the same ids, built
 * from the stored placement exactly as the first deployment built them — for the chains whose server it is, and
 * for the groups chains scaled out to it (docs/scaling.md#scale-out: the pipeline named as the chain with the
 * chain's groups on that server, and their NIC rules where the NIC has a rule table). Compares against what the
 * agent lists, so nothing present is installed twice, also when several restore the same server at once (its
 * callers, the agent watch, the device listener and a DEGRADED chain's reconcile, may notice one restart
 * together): what a chain lacks is decided under the chain's lock from a listing made under it
 * ({@link #current}). Switch rules are not the agent's and stay as they are (they still send the groups' tags to
 * this server). A group's flow state comes back from the agent's own file (--state-dir), which it offers
 * to the first deployment of the same pipeline and group id with the same Click config.
 */
public final class ServerRecovery {
    private static final Logger log = LoggerFactory.getLogger(ServerRecovery.class);

    private final ChainStore store;
    private final ChainManager chains;
    private final AgentCalls calls;
    /** The states whose chains run on their servers, and so are restored there. */
    private static final Set<ChainState> RESTORED = Set.of(ChainState.DEPLOYED, ChainState.ACTIVE,
            ChainState.DEGRADED);

    /**
     * @param timeout how long one agent call may take
     */
    public ServerRecovery(ChainStore store, ChainManager chains, Duration timeout) {
        this.store = Objects.requireNonNull(store);
        this.chains = Objects.requireNonNull(chains);
        this.calls = new AgentCalls(timeout);
    }

    /**
     * Restores every chain this instance leads on {@code server} (as its server, or for a group scaled out to it)
     * whose pipeline or NIC rules the agent lacks.
     * A chain that cannot be restored does not stop the others.
     *
     * @return the chains something was restored for
     * @throws MetronException AGENT_FAILURE when the agent cannot be asked what it holds, or when some chain
     *                         could not be restored (named with the reason; the others were restored)
     */
    public List<ChainId> restore(MetronServer server) {
        return restore(server, id -> true);
    }

    /**
     * {@link #restore(MetronServer)} for chain {@code id} alone: what a reconcile of that chain, which holds the
     * chain's lock, restores. It takes no other chain's lock while holding that one, so it cannot deadlock against
     * a thread that holds another chain's lock and waits for this one (before, a DEGRADED chain's reconcile
     * restored every chain of its server, taking their locks under its own); the others are restored by the agent
     * watch, the device listener and their own reconciles.
     */
    public List<ChainId> restore(MetronServer server, ChainId id) {
        return restore(server, id::equals);
    }

    private List<ChainId> restore(MetronServer server, Predicate<ChainId> which) {
        // one listing for the whole server: the chains it finds whole cost no further call
        Held seen = held(server.agent());
        List<ChainId> restored = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        Map<ChainId, Placement> placements = store.placements().snapshot();
        for (InstalledRecord st : store.installedRecords().values()) { // which chains: no device read
            if (!which.test(st.chainId())) {
                continue;
            }
            Placement placed = placements.get(st.chainId());
            if (!st.server().equals(Optional.of(server.id()))
                    && (placed == null || scaledOutTo(placed, server).isEmpty())) {
                continue;
            }
            ChainId id = st.chainId();
            try {
                chains.whileLeading(id, () -> {
                    if (restoreChain(id, server, seen)) {
                        restored.add(id);
                    }
                });
            } catch (MetronException e) {
                log.warn("Could not restore chain {} on {}: {}", id, server, e.getMessage());
                failed.add(id + ": " + e.getMessage());
            }
        }
        if (!failed.isEmpty()) {
            throw new MetronException(Fault.AGENT_FAILURE, "server " + server + " restored " + restored
                    + " but not " + failed);
        }
        return restored;
    }

    /**
     * After each round of the agent watch: what chains marked for removal left on a device that answers again
     * ({@code answering} servers, or a switch the network view has) is removed now.
     */
    public void afterRound(Set<org.onosproject.net.DeviceId> answering) {
        List<ChainId> gone = chains.retryRemovals(d -> answering.contains(d) || chains.switchAvailable(d));
        if (!gone.isEmpty()) {
            log.info("Chains {} removed: their devices answer again", gone);
        }
    }

    /**
     * One chain, under its lock; re-reads the store since the chain may have changed since the snapshot, and the
     * agent when {@code seen} says it lacks something of the chain.
     */
    private boolean restoreChain(ChainId id, MetronServer server, Held seen) {
        Optional<InstalledState> st = store.installed().get(id).map(Versioned::value);
        Optional<Chain> chain = store.chains().get(id).map(Versioned::value);
        Optional<Placement> p = store.placements().get(id).map(Versioned::value);
        // a chain the operator deleted (REMOVING) is never brought back; nor is a FAILED one
        if (st.isEmpty() || chain.isEmpty() || p.isEmpty() || !RESTORED.contains(chain.get().state())) {
            return false;
        }
        if (!st.get().server().equals(Optional.of(server.id()))) {
            return restoreScaledOut(id, chain.get(), p.get(), server, seen);
        }
        AgentClient agent = server.agent();
        Held now = current(agent, seen, st.get().pipeline() ? Optional.of(id.name()) : Optional.empty(),
                st.get().nicRuleIds());
        List<Long> missingRules = st.get().nicRuleIds().stream().filter(r -> !now.nicRules.contains(r))
                .collect(Collectors.toList());
        boolean missingPipeline = st.get().pipeline() && !now.pipelines.contains(id.name());
        if (missingRules.isEmpty() && !missingPipeline) {
            whole(chain.get(), server);
            return false;
        }
        // NIC rules first, as in a deployment: the pipeline's queues are fed from the moment it starts
        if (!missingRules.isEmpty()) {
            List<NicRule> rules = AgentRequests.nicRules(id, p.get()).stream()
                    .filter(r -> missingRules.contains(r.getId())).collect(Collectors.toList());
            Set<Long> built = rules.stream().map(NicRule::getId).collect(Collectors.toCollection(HashSet::new));
            if (!built.containsAll(missingRules)) {
                throw new MetronException(Fault.INTERNAL, "chain " + id + " recorded NIC rules "
                        + missingRules.stream().filter(r -> !built.contains(r)).collect(Collectors.toList())
                        + " its placement " + p.get().groups() + " does not produce");
            }
            calls.await(agent.installNicRules(NicRuleBatch.newBuilder().addAllRules(rules).build()),
                    "reinstalling " + rules.size() + " NIC rules of " + id + " on " + agent.target());
        }
        if (missingPipeline) {
            redeploy(agent, id, AgentRequests.pipeline(id, p.get(), compiled(chain.get(), p.get()),
                    p.get().groups().get(0).tag()));
        }
        log.info("Chain {} restored on {}: pipeline {}, NIC rules {}", id, server, missingPipeline ? "redeployed"
                : "was running", missingRules);
        whole(chain.get(), server);
        return true;
    }

    /**
     * A chain DEGRADED while its server was lost (ChainManager.serverLost) runs again once its server holds its
     * pipeline and NIC rules: ACTIVE, the loss kept in the log.
     */
    private void whole(Chain chain, MetronServer server) {
        if (chain.state() == ChainState.DEGRADED) {
            Chain now = store.chains().get(chain.id()).map(Versioned::value).orElse(chain);
            store.chains().put(chain.id(), now.withState(ChainState.ACTIVE, ""));
            log.info("Chain {} ACTIVE again: the agent of {} answers and holds its pipeline", chain.id(), server);
        }
    }

    /** The chain's groups scaled out to {@code server}. */
    private static List<GroupAssignment> scaledOutTo(Placement p, MetronServer server) {
        return p.groups().stream().filter(g -> g.remote() && g.server().equals(Optional.of(server.id())))
                .collect(Collectors.toList());
    }

    /**
     * The groups a chain scaled out to {@code server}: their NIC rules (when that NIC has a rule table, as the
     * scale-out installed them) and their pipeline, as the scale-outs left them.
     */
    private boolean restoreScaledOut(ChainId id, Chain chain, Placement p, MetronServer server, Held seen) {
        List<GroupAssignment> away = scaledOutTo(p, server);
        if (away.isEmpty()) {
            return false;
        }
        AgentClient agent = server.agent();
        // a group's NIC rule is looked for whether or not its NIC has a rule table: one more listing at most
        Held now = current(agent, seen, Optional.of(id.name()), away.stream()
                .map(g -> AgentRequests.nicRuleId(id, g.groupId())).collect(Collectors.toList()));
        List<GroupAssignment> lacking = away.stream().filter(g -> !now.nicRules.contains(AgentRequests.nicRuleId(id,
                g.groupId()))).collect(Collectors.toList());
        Set<String> tables = lacking.isEmpty() ? Set.of() : calls.await(agent.getResources(), "reading resources of "
                + agent.target()).getNicsList().stream().filter(n -> n.getMaxNicRules() > 0)
                .map(org.metron.agent.v1.Nic::getName).collect(Collectors.toSet());
        List<NicRule> missingRules = lacking.stream().filter(g -> tables.contains(g.nic()))
                .map(g -> AgentRequests.remoteNicRule(id, g)).collect(Collectors.toList());
        boolean missingPipeline = !now.pipelines.contains(id.name());
        if (missingRules.isEmpty() && !missingPipeline) {
            return false;
        }
        if (!missingRules.isEmpty()) {
            calls.await(agent.installNicRules(NicRuleBatch.newBuilder().addAllRules(missingRules).build()),
                    "reinstalling " + missingRules.size() + " NIC rules of " + id + " on " + agent.target());
        }
        if (missingPipeline) {
            redeploy(agent, id, AgentRequests.remotePipeline(id, p, server.id(), compiled(chain, p),
                    p.groups().get(0).tag()));
        }
        log.info("Chain {} groups {} scaled out to {} restored: pipeline {}, NIC rules {}", id, away.stream()
                .map(GroupAssignment::groupId).collect(Collectors.toList()), server, missingPipeline ? "redeployed"
                : "was running", missingRules.stream().map(NicRule::getId).collect(Collectors.toList()));
        return true;
    }

    /** What an agent held when it was listed: its pipelines' ids and its NIC rules' ids. */
    private static final class Held {
        final Set<String> pipelines;
        final Set<Long> nicRules;

        Held(Set<String> pipelines, Set<Long> nicRules) {
            this.pipelines = pipelines;
            this.nicRules = nicRules;
        }

        boolean lacks(Optional<String> pipeline, Collection<Long> rules) {
            return pipeline.map(n -> !pipelines.contains(n)).orElse(false) || !nicRules.containsAll(rules);
        }
    }

    private Held held(AgentClient agent) {
        Set<String> pipelines = calls.await(agent.listPipelines(), "listing pipelines on " + agent.target())
                .getPipelinesList().stream().map(PipelineStatus::getPipelineId).collect(Collectors.toSet());
        Set<Long> nicRules = calls.await(agent.listNicRules(""), "listing NIC rules on " + agent.target())
                .getRulesList().stream().map(NicRule::getId).collect(Collectors.toSet());
        return new Held(pipelines, nicRules);
    }

    /**
     * What the agent holds of a chain, for deciding under the chain's lock what to install: {@code seen}, the
     * listing {@link #restore} made before taking any lock, while it has all of {@code pipeline} and
     * {@code rules}; else a listing made now. Every restorer of the chain installs under the same lock, so a
     * listing made under it shows what another restorer installed meanwhile: restores of one server racing for a
     * restarted agent (the agent watch's round and the device listener's "available again" both saw it, each
     * with its own listing) install each missing thing once. Before, the second installed again from its older
     * listing and the agent refused it (InstallNicRules or DeployPipeline ALREADY_EXISTS); the watch's next
     * round recovered it. A chain {@code seen} finds whole costs no further call: nothing of it is removed by a
     * restore, and what the agent loses after this listing the watch sees (its boot id) next round.
     */
    private Held current(AgentClient agent, Held seen, Optional<String> pipeline, Collection<Long> rules) {
        return seen.lacks(pipeline, rules) ? held(agent) : seen;
    }

    private void redeploy(AgentClient agent, ChainId id, DeployPipelineRequest req) {
        PipelineStatus status = calls.build(agent, agent.deployPipeline(req), "redeploying pipeline " + id + " on "
                + agent.target());
        if (status.getState() == PipelineState.PIPELINE_FAILED) {
            throw new MetronException(Fault.AGENT_FAILURE, "agent " + agent.target()
                    + " reports redeployed pipeline " + id + " FAILED: " + status.getMessage());
        }
    }

    /**
     * The chain compiled for the profile it was placed with. A chain scaling split or merged runs more or fewer
     * groups than it compiles to; each placed group runs the compiled group it comes from
     * ({@link AgentRequests#compiledGroup}), so the pipeline comes back as it was, scaled.
     */
    private CompiledChain compiled(Chain chain, Placement p) {
        CompiledChain cc = chains.compiled(chain.id()); // the one cache: never synthesized again here
        p.groups().forEach(g -> AgentRequests.compiledGroup(cc, g.groupId()));
        return cc;
    }
}
