package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.PendingPart;
import org.metron.app.api.Placement;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * Removes what a chain installed, part by part (each switch's rules, the server's pipeline and NIC rules, the
 * groups scaling moved to other servers), and keeps in the store exactly what could not be removed: the chain's
 * installed state shrinks to what is left, and a chain the operator deleted stays {@link ChainState#REMOVING}
 * with that left-over as its {@link Chain#pending() pending parts} until a later attempt (its device returned,
 * the periodic retry, a second DELETE, a node taking the chain over) removes the rest; then the chain goes.
 * Callers hold the chain's lock.
 */
final class ChainRemoval {
    private static final Logger log = LoggerFactory.getLogger(ChainRemoval.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final Deployer deployer;
    private final Leadership leadership;
    private final UnaryOperator<InstalledState> withoutShared;
    private final Consumer<InstalledState> beforeSwitchRemoval;
    private final Consumer<ChainId> releasePlacement;
    private final Consumer<ChainId> forget;

    /**
     * @param withoutShared the installed state without the switch entries other chains hold too (left in place)
     * @param beforeSwitchRemoval called with the installed state before its switch rules are removed: what is armed
     *                            for the chain is read back while its rules still send to its groups
     * @param releasePlacement forgets the chain's installed state, placement, backups and tags
     * @param forget forgets what the manager keeps of a chain that is gone (its compiled form)
     */
    ChainRemoval(ChainStore store, ServerRegistry servers, Deployer deployer, Leadership leadership,
                 UnaryOperator<InstalledState> withoutShared, Consumer<InstalledState> beforeSwitchRemoval,
                 Consumer<ChainId> releasePlacement,
                 Consumer<ChainId> forget) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.deployer = Objects.requireNonNull(deployer);
        this.leadership = Objects.requireNonNull(leadership);
        this.withoutShared = Objects.requireNonNull(withoutShared);
        this.beforeSwitchRemoval = Objects.requireNonNull(beforeSwitchRemoval);
        this.releasePlacement = Objects.requireNonNull(releasePlacement);
        this.forget = Objects.requireNonNull(forget);
    }

    /** The refusal of an operation ({@code what}: "updated", "submitted again") on a chain marked for removal. */
    static MetronException refusal(Chain c, String what) {
        return new MetronException(MetronException.Fault.BEING_REMOVED, "chain " + c.id() + " cannot be " + what
                + ": it was deleted and is being removed" + (c.pending().isEmpty() ? "" : " (left: " + c.pending()
                + ")") + "; submit it again once it is gone");
    }

    /** {@link #attempt}; a chain gone is forgotten and its leadership released. Caller holds the chain's lock. */
    Optional<Chain> finish(Chain chain) {
        Optional<Chain> left = attempt(chain);
        if (left.isEmpty()) {
            forget.accept(chain.id());
            leadership.release(chain.id());
        }
        return left;
    }

    /**
     * Another attempt for every chain marked for removal that this instance acts for and that has something left
     * on a device {@code back} accepts, each under its lock.
     *
     * @return the chains now gone
     */
    List<ChainId> retry(Predicate<DeviceId> back) {
        List<ChainId> gone = new ArrayList<>();
        for (Chain c : store.chains().snapshot().values()) {
            if (!c.markedForRemoval() || c.pending().stream().noneMatch(p -> back.test(p.device()))) {
                continue;
            }
            synchronized (store.lockFor(c.id())) {
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), c.id())) {
                    Optional<Chain> now = store.chains().get(c.id()).map(Versioned::value);
                    if (leadership.actsFor(c.id()) && now.isPresent() && now.get().markedForRemoval()
                            && finish(now.get()).isEmpty()) {
                        gone.add(c.id());
                    }
                }
            }
        }
        return gone;
    }

    /**
     * One attempt at removing a chain marked for removal. When nothing of it is left its record goes.
     *
     * @return empty when the chain is gone; else the chain, REMOVING, naming what is left
     */
    Optional<Chain> attempt(Chain chain) {
        if (!chain.markedForRemoval()) {
            throw new IllegalStateException("chain " + chain.id() + " is " + chain.state() + ", not marked for "
                    + "removal");
        }
        List<PendingPart> left = removeInstalled(chain.id());
        if (left.isEmpty()) {
            store.chains().remove(chain.id());
            log.info("Chain {} removed", chain.id());
            return Optional.empty();
        }
        Chain pending = chain.withState(ChainState.REMOVING, "deleted; not removed yet: " + left.stream()
                .map(PendingPart::toString).collect(Collectors.joining("; ")) + " (retried when the device "
                + "answers again)", left);
        store.chains().put(chain.id(), pending);
        log.warn("Chain {} deleted, but not everything could be removed yet: {}", chain.id(), left);
        return Optional.of(pending);
    }

    /**
     * Removes everything the chain has installed that can be removed now: switches first (no new traffic enters),
     * device by device from the last installed, then the server's pipeline, then its NIC rules, then the groups on
     * other servers. What is left stays recorded as installed; when nothing is, the placement is released.
     *
     * @return what is left, per device (empty: everything went)
     */
    List<PendingPart> removeInstalled(ChainId id) {
        List<PendingPart> left = new ArrayList<>();
        Optional<InstalledState> installed = store.installed().get(id).map(Versioned::value);
        if (installed.isPresent()) {
            beforeSwitchRemoval.accept(installed.get());
            InstalledState st = withoutShared.apply(installed.get());
            List<InstalledRule> keptRules = removeSwitchRules(st, left);
            // a device that could not be read may still hold the chain's rules: they stay recorded, by id
            st.unread().forEach((dev, rules) -> left.add(new PendingPart(dev, rules.size() + " switch rules",
                    st.unreadWhy().getOrDefault(dev, "not read"))));
            boolean[] keep = removeServerPart(st, left);
            InstalledState remaining = new InstalledState(id, st.server(), keptRules,
                    keep[1] ? st.nicRuleIds() : List.of(), keep[0], st.unread(), st.unreadWhy());
            left.addAll(removeScaledOut(id, st.server()));
            // what a deposed instance could not remove (its writes refused) is its new owner's to record
            ChainFence.check("recording what is left of chain " + id);
            if (!left.isEmpty()) {
                store.installed().put(id, remaining);
            }
        }
        if (left.isEmpty()) {
            releasePlacement.accept(id);
        }
        return left;
    }

    /** Each device's rules as one removal, last installed first; answers the rules that stay. */
    private List<InstalledRule> removeSwitchRules(InstalledState st, List<PendingPart> left) {
        Map<DeviceId, List<InstalledRule>> byDevice = new LinkedHashMap<>();
        st.switchRules().forEach(r -> byDevice.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r));
        List<DeviceId> order = new ArrayList<>(byDevice.keySet());
        Collections.reverse(order);
        List<InstalledRule> kept = new ArrayList<>();
        for (DeviceId dev : order) {
            List<InstalledRule> rules = byDevice.get(dev);
            String failed = once(new Deployer.Undo(rules.size() + " rules on " + dev,
                    () -> deployer.switchRemoval(dev, rules)));
            if (failed != null) {
                kept.addAll(rules);
                left.add(new PendingPart(dev, rules.size() + " switch rules", failed));
            }
        }
        return kept;
    }

    /**
     * The pipeline, then the NIC rules (a restarted agent no longer holding them counts as removed). An agent
     * that fails the first call is not asked the second: both stay.
     *
     * @return {pipeline kept, NIC rules kept}
     */
    private boolean[] removeServerPart(InstalledState st, List<PendingPart> left) {
        boolean pipeline = st.pipeline();
        boolean nics = !st.nicRuleIds().isEmpty();
        if (st.server().isEmpty() || (!pipeline && !nics)) {
            return new boolean[]{false, false};
        }
        DeviceId serverId = st.server().get();
        String pipelineWhat = "pipeline " + st.chainId();
        String nicWhat = "NIC rules " + st.nicRuleIds();
        Optional<MetronServer> server = servers.server(serverId);
        if (server.isEmpty()) {
            String why = "server " + serverId + " is not registered";
            if (pipeline) {
                left.add(new PendingPart(serverId, pipelineWhat, why));
            }
            if (nics) {
                left.add(new PendingPart(serverId, nicWhat, why));
            }
            return new boolean[]{pipeline, nics};
        }
        AgentClient agent = server.get().agent();
        if (pipeline) {
            String failed = once(new Deployer.Undo(pipelineWhat + " on " + agent.target(),
                    () -> AgentCalls.removePipelinePresent(agent, st.chainId().name())));
            if (failed != null) {
                left.add(new PendingPart(serverId, pipelineWhat, failed));
                if (nics) {
                    left.add(new PendingPart(serverId, nicWhat, "not tried: the agent failed to remove the pipeline"));
                }
                return new boolean[]{true, nics};
            }
        }
        if (nics) {
            String failed = once(new Deployer.Undo(nicWhat + " on " + agent.target(),
                    () -> AgentCalls.removeNicRulesPresent(agent, st.nicRuleIds())));
            if (failed != null) {
                left.add(new PendingPart(serverId, nicWhat, failed));
                return new boolean[]{false, true};
            }
        }
        return new boolean[]{false, false};
    }

    /**
     * Groups scaling moved to another server (docs/scaling.md#scale-out) run there as their own pipeline (named
     * after the chain) with their own NIC rule; the chain's installed state names only its own server, so they go
     * here, from the placement (kept until nothing is left). Removal there is idempotent.
     */
    private List<PendingPart> removeScaledOut(ChainId id, Optional<DeviceId> home) {
        List<PendingPart> left = new ArrayList<>();
        Optional<Placement> placed = store.placement(id);
        Map<DeviceId, List<GroupAssignment>> far = new LinkedHashMap<>();
        for (GroupAssignment g : placed.map(Placement::groups).orElse(List.of())) {
            g.server().filter(d -> !Optional.of(d).equals(home))
                    .ifPresent(d -> far.computeIfAbsent(d, k -> new ArrayList<>()).add(g));
        }
        far.forEach((serverId, groups) -> {
            String what = "pipeline " + id + " and NIC rules of groups " + groups.stream()
                    .map(GroupAssignment::groupId).collect(Collectors.toList());
            Optional<MetronServer> server = servers.server(serverId);
            if (server.isEmpty()) {
                left.add(new PendingPart(serverId, what, "server " + serverId + " is not registered"));
                return;
            }
            AgentClient agent = server.get().agent();
            // as Deployer.undeploy: the pipeline first (the last pushed undo runs first), then the NIC rules
            Deque<Deployer.Undo> undo = new ArrayDeque<>();
            for (GroupAssignment g : groups) {
                undo.push(new Deployer.Undo("NIC rule of group " + g.groupId() + " on " + agent.target(),
                        () -> AgentCalls.removeNicRulesPresent(agent, List.of(AgentRequests.nicRuleId(id,
                                g.groupId())))));
            }
            undo.push(new Deployer.Undo("pipeline " + id + " on " + agent.target(),
                    () -> AgentCalls.removePipelinePresent(agent, id.name())));
            List<String> failed = deployer.rollback(undo);
            if (!failed.isEmpty()) {
                left.add(new PendingPart(serverId, what, String.join("; ", failed)));
            }
        });
        return left;
    }

    /** Runs one removal; answers its error (without the part's name, which the pending part carries), or null. */
    private String once(Deployer.Undo u) {
        Deque<Deployer.Undo> d = new ArrayDeque<>();
        d.push(u);
        List<String> failed = deployer.rollback(d);
        return failed.isEmpty() ? null : failed.get(0).substring(Math.min(failed.get(0).length(),
                u.what.length() + 2));
    }
}
