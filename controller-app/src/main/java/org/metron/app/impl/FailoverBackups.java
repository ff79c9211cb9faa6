package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.Leadership;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.ChainStore;
import org.metron.app.store.FailoverBackup;
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
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.metron.app.api.Deployments.ingress;

/**
 * The chains' failover backups, computed in the background after every change of a chain's placement or rules:
 * for every device holding its switch rules but the ingress device, and every switch-to-switch link its rules
 * send into, where the chain would go without it (same server, groups and tags; planned by {@link ChainReroute}),
 * kept in the store and armed in the switches ({@link DataPlaneFailover}).
 */
final class FailoverBackups {
    private static final Logger log = LoggerFactory.getLogger(FailoverBackups.class);

    /** Plans one backup: the chain's reroute over a network view without a device or link. */
    @FunctionalInterface
    interface Planner {
        FailoverBackup backupOver(ChainId id, Placement basis, DeviceId failed, NetworkWithout without,
                                  ChainCompiler compiler);
    }

    private final ChainStore store;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final ChainCompilers compilers;
    private final DataPlaneFailover dataPlane;
    private final Planner planner;
    /** Computes failover backups off the operations' threads, one chain at a time. */
    private final ExecutorService backupWorker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "metron-backups");
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY); // background work: operations and the data path come first
        return t;
    });
    /** The chains whose backups were asked for since this instance started ({@link #keepsBackups}). */
    private final Set<ChainId> refreshed = ConcurrentHashMap.newKeySet();

    FailoverBackups(ChainStore store, Leadership leadership, PlacementEngine placement, ChainCompilers compilers,
                    DataPlaneFailover dataPlane, Planner planner) {
        this.store = Objects.requireNonNull(store);
        this.leadership = Objects.requireNonNull(leadership);
        this.placement = Objects.requireNonNull(placement);
        this.compilers = Objects.requireNonNull(compilers);
        this.dataPlane = Objects.requireNonNull(dataPlane);
        this.planner = Objects.requireNonNull(planner);
    }

    /**
     * Recomputes, in the background, the chain's backups: for every device holding its switch rules but the
     * ingress device, where the chain would go if that device failed. Called after every change of the chain's
     * placement or rules: deployment, update, reroute here, every scaling operation through
     * {@link ChainManager#rulesChanged}; a backup computed for an older placement is never used (see {@code ChainReroute.fits}).
     */
    void refresh(ChainId id) {
        refreshed.add(id);
        backupWorker.execute(() -> {
            try {
                computeBackups(id);
            } catch (RuntimeException e) {
                log.debug("Backups of {} not computed: {}", id, e.toString());
            }
        });
    }

    /** Stops computing backups (the hosts call it when they stop). */
    void close() {
        backupWorker.shutdownNow();
    }

    /** Waits until every backup computation asked for so far has ended (tests, benchmarks). */
    void awaitBackups() {
        try {
            backupWorker.submit(() -> { }).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    private void computeBackups(ChainId id) {
        Optional<Placement> basis = store.placement(id);
        Optional<InstalledState> st = store.installed().get(id).map(Versioned::value);
        Optional<Chain> chain = store.chains().get(id).map(Versioned::value);
        if (basis.isEmpty() || st.isEmpty() || chain.isEmpty() || !leadership.actsFor(id)) {
            return;
        }
        if (dataPlane.failing(id, placement.network(), st.get().switchRules())) {
            log.info("Chain {}: a link it uses is down; its backups stay until it is moved", id);
            return;
        }
        ChainCompiler compiler = compilers.of(chain.get());
        Map<DeviceId, FailoverBackup> out = new LinkedHashMap<>();
        Set<DeviceId> candidates = new LinkedHashSet<>();
        candidates.addAll(st.get().devices());
        candidates.remove(ingress(chain.get().deployment()).deviceId()); // nothing routes around it
        for (DeviceId f : candidates) {
            NetworkWithout without = new NetworkWithout(placement.network(), f);
            try {
                out.put(f, planner.backupOver(id, basis.get(), f, without, compiler));
            } catch (MetronException e) {
                log.debug("Chain {}: no backup for {} failing: {}", id, f, e.getMessage());
            }
        }
        List<LinkBackup> links = linkBackups(id, basis.get(), st.get(), compiler);
        // no chain lock (operations must not wait for this): written only over the configuration read here, and a
        // backup whose basis is not the placement at failure time is never used anyway (fits)
        Optional<Versioned<BackupConfiguration>> cfg = store.backups().get(id);
        if (cfg.isPresent() && store.placement(id).equals(basis)
                && store.backups().replace(id, cfg.get().version(), cfg.get().value().withFailovers(out))) {
            log.info("Chain {}: failover backups for {} of {} devices, {} links", id, out.size(), candidates.size(),
                    links.size());
        }
        // arming rewrites rules of the chain's path: under its lock, and only over the rules the backups were
        // computed for (a chain changed meanwhile is armed after its own refresh)
        synchronized (store.lockFor(id)) {
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                if (store.placement(id).equals(basis) && store.installed().get(id).map(Versioned::value).equals(st)
                        && leadership.actsFor(id)) {
                    dataPlane.update(id, st.get().switchRules(), links);
                }
            }
        }
    }

    /**
     * A backup for every switch-to-switch link the chain's rules send traffic into: where the chain goes over the
     * network without that link (same server, groups and tags).
     */
    private List<LinkBackup> linkBackups(ChainId id, Placement basis, InstalledState st, ChainCompiler compiler) {
        Map<Set<ConnectPoint>, Link> used = new LinkedHashMap<>();
        for (InstalledRule r : st.switchRules()) {
            r.rule().treatment().allInstructions().stream()
                    .filter(i -> i instanceof Instructions.OutputInstruction)
                    .map(i -> new ConnectPoint(r.rule().deviceId(), ((Instructions.OutputInstruction) i).port()))
                    .flatMap(cp -> placement.network().egressLinks(cp).stream())
                    .filter(l -> placement.network().device(l.dst().deviceId())
                            .map(d -> d.role() != DeviceRole.SERVER).orElse(false))
                    .forEach(l -> used.putIfAbsent(Set.of(l.src(), l.dst()), l));
        }
        List<LinkBackup> out = new ArrayList<>();
        for (Link l : used.values()) {
            NetworkWithout without = new NetworkWithout(placement.network(), l);
            try {
                out.add(new LinkBackup(l, planner.backupOver(id, basis, l.dst().deviceId(), without, compiler)));
            } catch (MetronException e) {
                log.debug("Chain {}: no backup for link {}-{} failing: {}", id, l.src(), l.dst(), e.getMessage());
            }
        }
        return out;
    }

    /**
     * Whether this instance computed (or is computing) the chain's backups since it started: if not, it restarted
     * or took the chain over, and what is armed for the chain is only in the switches.
     */
    boolean keepsBackups(ChainId id) {
        return refreshed.contains(id);
    }

    /** Forgets the chain's backups and arming, touching no switch ({@link ChainManager#gained}). */
    void forget(ChainId id) {
        refreshed.remove(id);
        dataPlane.forget(id);
    }
}
