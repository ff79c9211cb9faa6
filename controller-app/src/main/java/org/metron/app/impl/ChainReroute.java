package org.metron.app.impl;


import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.ChainStore;
import org.metron.app.store.FailoverBackup;
import org.metron.app.store.InstalledRecord;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * Keeps deployed chains' traffic flowing around failed switches and links: a reroute moves a chain's switch rules
 * around a device (by a lookup of the failover backup precomputed for it when it still fits, else computed from the
 * current network view), keeping its server, groups and tags. It plans the failover backups {@link FailoverBackups}
 * computes in the background after every change of a chain's placement or rules. The chain manager's
 * {@code reroute}, {@code refreshBackups} and {@code rulesChanged} come here.
 */
final class ChainReroute {
    private static final Logger log = LoggerFactory.getLogger(ChainReroute.class);

    private final ChainStore store;
    private final ServerRegistry servers;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final RulePlanner planner;
    private final Deployer deployer;
    private final TagAllocator tags;
    private final ChainCompilers compilers;
    private final DataPlaneFailover dataPlane;
    private final FailoverBackups backups;
    /** Tries again, later, to move chains whose move off a failed link failed. */
    private final java.util.concurrent.ScheduledExecutorService moveRetries =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "metron-move-retries");
                t.setDaemon(true);
                return t;
            });

    ChainReroute(ChainStore store, ServerRegistry servers, Leadership leadership, PlacementEngine placement,
                 RulePlanner planner, Deployer deployer, TagAllocator tags, ChainCompilers compilers,
                 DataPlaneFailover dataPlane) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.leadership = Objects.requireNonNull(leadership);
        this.placement = Objects.requireNonNull(placement);
        this.planner = Objects.requireNonNull(planner);
        this.deployer = Objects.requireNonNull(deployer);
        this.tags = Objects.requireNonNull(tags);
        this.compilers = Objects.requireNonNull(compilers);
        this.dataPlane = Objects.requireNonNull(dataPlane);
        this.backups = new FailoverBackups(store, leadership, placement, compilers, dataPlane, this::backupOver);
    }

    private Chain existing(ChainId id) {
        return store.chains().get(id).map(Versioned::value).orElseThrow(() -> new MetronException(
                Fault.UNKNOWN_CHAIN, "no chain named '" + id + "'"));
    }

    /**
     * Re-routes every deployed chain whose switch rules use {@code device} (it failed, or one of its links
     * did): a new path and offload device from the current network view, the same server, groups and tags,
     * so pipelines keep running and keep their flow state. Chains whose new offload device would need
     * different groups are left as they are (and logged): they need a resubmission.
     *
     * @return the chains that were moved
     */
    List<ChainId> reroute(DeviceId device) {
        return reroute(device, "device " + device + " unavailable");
    }

    /**
     * {@link #reroute(DeviceId)} naming what failed in logs and reasons ({@code cause}: "device X unavailable",
     * "link X - Y removed"): the device rerouted around may itself be healthy (one end of a lost link).
     */
    List<ChainId> reroute(DeviceId device, String cause) {
        return reroute(device, cause, Set.of(), id -> true);
    }

    private List<ChainId> reroute(DeviceId device, String cause, Set<ChainId> skip, Predicate<ChainId> concerned) {
        List<ChainId> moved = new ArrayList<>();
        // the stored records name each chain's devices: no device is read to find the chains to move
        for (InstalledRecord rec : store.installedRecords().values()) {
            if (skip.contains(rec.chainId())
                    || rec.devices().stream().noneMatch(d -> d.device().equals(device))
                    || !concerned.test(rec.chainId())) {
                continue;
            }
            ChainId id = rec.chainId();
            synchronized (store.lockFor(id)) {
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                    // a chain the operator deleted is never given new rules
                    if (!leadership.actsFor(id) || store.chains().get(id).map(Versioned::value)
                            .map(Chain::markedForRemoval).orElse(true)) {
                        continue;
                    }
                    try {
                        rerouteOne(id, device, cause, Optional.empty());
                        moved.add(id);
                    } catch (MetronException e) {
                        log.warn("Chain {} could not be rerouted after {} (its rules on {}): {}", id, cause, device,
                                e.getMessage());
                    }
                }
            }
        }
        return moved;
    }

    /**
     * Moves the chains whose traffic crosses {@code link} (either direction) to the backup precomputed for it, when
     * it still fits: the path the switches already switched to if the backup was armed as fast-failover groups
     * ({@link DataPlaneFailover}). The other chains sending into the link (either end) are rerouted as for a
     * failed device; chains that only use one of its switches stay as they are.
     *
     * @return the chains that were moved
     */
    List<ChainId> rerouteLink(Link link, String cause) {
        // only chains that send into the link are moved: a chain that merely uses one of its switches stays, and
        // the cut's second event (the link's other direction) finds the chain off the link already, on its backup
        // (decided once per chain whose records name a device at the link's ends, its rules read from the switches)
        Set<DeviceId> ends = Set.of(link.src().deviceId(), link.dst().deviceId());
        Set<ChainId> into = store.installedRecords().values().stream()
                .filter(rec -> rec.devices().stream().anyMatch(d -> ends.contains(d.device())))
                .map(InstalledRecord::chainId)
                .filter(id -> store.installed().get(id).map(Versioned::value)
                        .map(st -> sendsInto(st, link.src()) || sendsInto(st, link.dst())).orElse(false))
                .collect(Collectors.toSet());
        Predicate<ChainId> sendsInto = into::contains;
        List<ChainId> moved = new ArrayList<>();
        for (ChainId id : into) {
            Optional<LinkBackup> lb = dataPlane.backupFor(id, link);
            if (lb.isEmpty()) {
                continue;
            }
            synchronized (store.lockFor(id)) {
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                    if (!leadership.actsFor(id) || store.chains().get(id).map(Versioned::value)
                            .map(Chain::markedForRemoval).orElse(true)) {
                        continue;
                    }
                    try {
                        rerouteOne(id, link.dst().deviceId(), cause, lb.map(LinkBackup::backup));
                        moved.add(id);
                    } catch (MetronException e) {
                        log.warn("Chain {} could not be moved to its backup after {}: {}; next try in {} ms", id, cause,
                                e.getMessage(), FIRST_MOVE_RETRY_MS);
                        note(id, "not moved to its link backup after " + cause + ": "
                                + e.getMessage() + "; next try in " + FIRST_MOVE_RETRY_MS + " ms");
                    }
                }
            }
        }
        Set<ChainId> done = Set.copyOf(moved);
        moved.addAll(reroute(link.src().deviceId(), cause, done, sendsInto));
        moved.addAll(reroute(link.dst().deviceId(), cause, Set.copyOf(moved), sendsInto));
        Set<ChainId> left = new java.util.LinkedHashSet<>(into);
        left.removeAll(moved);
        if (!left.isEmpty()) {
            scheduleMoves(link, cause, left, 1, FIRST_MOVE_RETRY_MS);
        }
        return moved;
    }

    /** The first delay before a chain that could not be moved off a failed link is tried again; it doubles. */
    static final long FIRST_MOVE_RETRY_MS = 1000;
    static final long MAX_MOVE_RETRY_MS = 30_000;

    private void scheduleMoves(Link link, String cause, Set<ChainId> chains, int attempt, long delayMs) {
        try {
            moveRetries.schedule(() -> retryMoves(link, cause, chains, attempt, delayMs), delayMs,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("Not retrying moves after {}: closed", cause);
        }
    }

    /**
     * Tries again to move chains that still send into a failed link (their move failed: a switch refused, the
     * backup no longer fitted and no path was found): while they stay there, their traffic rides on whatever the
     * switches switched to alone and their backups cannot be refreshed ({@link DataPlaneFailover#failing}). Each
     * chain is dropped once it is moved, no longer sends into the link (something else moved it), is deleted or
     * led elsewhere, or the link is back (its backups are then computed and armed again). Each failed try is in the
     * chain's reason.
     */
    private void retryMoves(Link link, String cause, Set<ChainId> chains, int attempt, long delayMs) {
        Set<ChainId> left = new java.util.LinkedHashSet<>();
        boolean linkBack = placement.network().egressLinks(link.src()).stream()
                .anyMatch(l -> l.dst().equals(link.dst()));
        long next = Math.min(MAX_MOVE_RETRY_MS, 2 * delayMs);
        for (ChainId id : chains) {
            synchronized (store.lockFor(id)) {
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                    Optional<Chain> c = store.chains().get(id).map(Versioned::value);
                    Optional<InstalledState> st = store.installed().get(id).map(Versioned::value);
                    if (c.isEmpty() || c.get().markedForRemoval() || !leadership.actsFor(id) || st.isEmpty()
                            || !(sendsInto(st.get(), link.src()) || sendsInto(st.get(), link.dst()))) {
                        continue;
                    }
                    if (linkBack) {
                        note(id, "link back after " + cause + ": the chain stays on it; backups re-armed");
                        backups.refresh(id);
                        continue;
                    }
                    try {
                        Optional<LinkBackup> lb = dataPlane.backupFor(id, link);
                        rerouteOne(id, link.dst().deviceId(), cause + ", try " + (attempt + 1),
                                lb.map(LinkBackup::backup));
                    } catch (MetronException e) {
                        log.warn("Chain {} still not moved after {} (try {}): {}; next try in {} ms", id, cause,
                                attempt + 1, e.getMessage(), next);
                        note(id, "not moved after " + cause + " (try " + (attempt + 1) + "): " + e.getMessage()
                                + "; next try in " + next + " ms");
                        left.add(id);
                    }
                }
            }
        }
        if (!left.isEmpty()) {
            scheduleMoves(link, cause, left, attempt + 1, next);
        }
    }

    /** Sets the chain's reason, its state kept. */
    private void note(ChainId id, String reason) {
        store.chains().get(id).map(Versioned::value)
                .ifPresent(c -> store.chains().put(id, c.withState(c.state(), reason, c.pending())));
    }

    /** Whether one of the chain's switch rules outputs at {@code end} (immediately or deferred). */
    private static boolean sendsInto(InstalledState st, ConnectPoint end) {
        return st.switchRules().stream().map(InstalledRule::rule).filter(r -> r.deviceId().equals(end.deviceId()))
                .flatMap(r -> java.util.stream.Stream.concat(r.treatment().allInstructions().stream(),
                        r.treatment().deferred().stream()))
                .anyMatch(i -> i instanceof Instructions.OutputInstruction
                        && ((Instructions.OutputInstruction) i).port().equals(end.port()));
    }

    private static final class Reroute {
        final OffloadChoice offload;
        final Placement placement;
        /** Per device, install order (the offload device last). */
        final Map<DeviceId, List<InstalledRule>> rules;

        Reroute(OffloadChoice offload, Placement placement, Map<DeviceId, List<InstalledRule>> rules) {
            this.offload = offload;
            this.placement = placement;
            this.rules = rules;
        }

        List<InstalledRule> allRules() {
            return rules.values().stream().flatMap(List::stream).collect(Collectors.toList());
        }
    }

    /**
     * Records {@code st} with {@code next}'s rules added, before they are committed: an owner that stops after
     * committing them and before recording the reroute leaves them in the chain's record, not orphaned on the
     * switches (a recorded rule a device does not hold reads as not installed), so the next owner's reroute or the
     * chain's removal takes them. A reroute that fails rolls its rules back and leaves this record, which then
     * reads as {@code st}. Costs one store write before the commit (a Raft round in a cluster).
     */
    private void recordIntent(ChainId id, InstalledState st, Map<DeviceId, List<InstalledRule>> next) {
        List<InstalledRule> union = new ArrayList<>(st.switchRules());
        next.values().forEach(union::addAll);
        store.installed().put(id, st.withSwitchRules(union));
    }

    /**
     * Moves a deployed chain's switch rules around a failed device: by a lookup of the backup precomputed for
     * that device when it still fits (computed for the chain's current placement, every device it uses
     * available), else by computing a new path and offload device from the current network view.
     */
    private void rerouteOne(ChainId id, DeviceId failed, String cause, Optional<FailoverBackup> linkBackup) {
        long t0 = System.nanoTime();
        Placement p = store.placement(id).orElseThrow(() -> new MetronException(Fault.INTERNAL, "chain " + id
                + " has installed rules but no placement"));
        InstalledState st = store.installed().get(id).map(Versioned::value).orElseThrow();
        // a link backup still uses both ends of the link; a device backup must avoid the failed device
        Optional<FailoverBackup> backup = linkBackup.isPresent() ? linkBackup.filter(b -> fits(b, p, null))
                : store.backups().get(id).map(Versioned::value).flatMap(b -> b.failover(failed))
                .filter(b -> fits(b, p, failed));
        Placement moved;
        if (backup.isPresent()) {
            moved = backup.get().moved();
            recordIntent(id, st, backup.get().switchRulesByDevice());
            store.installed().put(id, deployer.reroute(st, backup.get().switchRulesByDevice()));
            compilers.moved(id); // compiled for the new offload profile when asked
        } else {
            Reroute r = planReroute(id, placement, planner, compilers.of(existing(id)));
            moved = r.placement;
            recordIntent(id, st, r.rules);
            store.installed().put(id, deployer.reroute(st, r.rules));
            // the new offload device's alternatives (as before this reroute path had backups); failovers follow
            store.backups().put(id, new BackupConfiguration(id, r.offload.backups(), r.offload.backupProfiles()));
            compilers.placed(existing(id), r.offload.compiled());
        }
        store.placements().put(id, moved);
        String how = backup.isPresent() ? "from the backup precomputed for " + (linkBackup.isPresent()
                ? "the link" : failed.toString()) : "recomputed";
        Chain c = existing(id);
        store.chains().put(id, c.withState(c.state(), "rerouted after " + cause + " (" + how + ", "
                + ChainBringUp.ms(t0, System.nanoTime()) + " ms): offload on " + moved.offloadDevice().map(Object::toString)
                .orElse("-"), c.pending()));
        log.info("Chain {} rerouted after {} ({} rules moved off {}) {} in {} ms: offload on {}", id, cause,
                st.switchRules().stream().filter(r -> r.rule().deviceId().equals(failed)).count(), failed, how,
                ChainBringUp.ms(t0, System.nanoTime()), moved.offloadDevice().map(Object::toString).orElse("-"));
        backups.refresh(id);
    }

    /**
     * A backup fits while the chain still has the placement it was computed for and its devices are up
     * ({@code failed}: the device it avoids, null for a link backup).
     */
    private boolean fits(FailoverBackup b, Placement current, DeviceId failed) {
        return b.basis().equals(current) && b.switchRules().stream().map(r -> r.rule().deviceId()).distinct()
                .allMatch(d -> !d.equals(failed) && placement.network().device(d).isPresent());
    }

    /**
     * A new path and offload device for a deployed chain over {@code pe}'s and {@code rp}'s network view (the
     * current one, or one without a device whose failure is precomputed), keeping server, groups and tags.
     */
    private Reroute planReroute(ChainId id, PlacementEngine pe, RulePlanner rp, ChainCompiler compiler) {
        Chain chain = existing(id);
        Deployment d = chain.deployment();
        Placement p = store.placement(id).orElseThrow(() -> new MetronException(Fault.INTERNAL, "chain " + id
                + " has installed rules but no placement"));
        Optional<MetronServer> server = p.server().flatMap(servers::server);
        if (p.server().isPresent() && server.isEmpty()) {
            throw new MetronException(Fault.AGENT_FAILURE, "server " + p.server().get() + " is gone");
        }
        OffloadChoice oc = server.isPresent()
                ? pe.chooseOffload(id, ingress(d), server.get().attachment(p.nic()).get(), compiler)
                : pe.chooseFullOffload(id, ingress(d), egress(d), compiler).orElseThrow(() ->
                new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "no device can take chain " + id + " alone"));
        Tag marker = p.groups().isEmpty() ? tags.allocations().stream()
                .filter(t -> t.chainId().equals(id)).map(TagAllocation::tag).findFirst().orElseThrow()
                : p.groups().get(0).tag();
        Placement moved = new Placement(id, p.server(), p.nic(), p.egressNic(), Optional.of(oc.device()),
                oc.profile().name(), p.groups());
        // planned as compiled, then as scaling left the groups (split, sliced, on other servers, merged)
        Placement basis;
        try {
            basis = ScaledRules.basis(moved, oc.compiled());
        } catch (MetronException e) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "offload device " + oc.device() + " would need "
                    + "other server groups: " + e.getMessage(), e);
        }
        DeploymentPlan plan = rp.plan(id, d, basis, server, false, oc, marker);
        return new Reroute(oc, moved, ScaledRules.of(plan, basis, moved, oc.device(), g -> rp.remotePath(id, d,
                oc.device(), servers.server(g.server().orElseThrow()).orElseThrow(() -> new MetronException(
                        Fault.AGENT_FAILURE, "server " + g.server().get() + " of group " + g.groupId() + " is gone")),
                g, marker, ReplyTraffic.of(oc.compiled()).present()), rp.appId()));
    }

    /**
     * The chain's failover backup for {@code failed} (a device, or a link's far end) over {@code without}: the
     * reroute planned over that view, for {@link FailoverBackups}.
     */
    FailoverBackup backupOver(ChainId id, Placement basis, DeviceId failed, NetworkWithout without,
                              ChainCompiler compiler) {
        Reroute r = planReroute(id, placement.over(without), planner.over(without), compiler);
        return new FailoverBackup(failed, basis, r.placement, r.allRules());
    }

    /** The chains' failover backups, computed here in the background. */
    FailoverBackups backups() {
        return backups;
    }

    /** Stops computing backups and retrying moves (the hosts call it when they stop; chains stay as they are). */
    void close() {
        backups.close();
        moveRetries.shutdownNow();
    }
}
