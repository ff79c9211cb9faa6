package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Takes down what a chain holds: removes what it installed ({@link ChainRemoval}), leaving the switch entries other
 * chains hold too, and releases its placement, backups and tags. Callers hold the chain's lock.
 */
final class ChainTeardown {
    private static final Logger log = LoggerFactory.getLogger(ChainTeardown.class);

    private final ChainStore store;
    private final TagAllocator tags;
    private final ChainCompilers compilers;
    private final ChainRemoval removal;
    private final DataPlaneFailover dataPlane;

    ChainTeardown(ChainStore store, ServerRegistry servers, Deployer deployer, Leadership leadership,
                  TagAllocator tags, ChainCompilers compilers, DataPlaneFailover dataPlane) {
        this.dataPlane = Objects.requireNonNull(dataPlane);
        this.store = Objects.requireNonNull(store);
        this.tags = Objects.requireNonNull(tags);
        this.compilers = Objects.requireNonNull(compilers);
        this.removal = new ChainRemoval(store, servers, deployer, leadership, this::withoutShared,
                st -> dataPlane.recallForRemoval(st.chainId(), st.switchRules()), this::releasePlacement,
                compilers::forget);
    }

    /** The removal of what chains installed, part by part. */
    ChainRemoval removal() {
        return removal;
    }

    /**
     * Removes what the chain installed and releases what it holds ({@link ChainRemoval}); what could not be removed
     * stays recorded. Answers what is left.
     */
    List<String> tearDown(Chain chain) {
        return removal.removeInstalled(chain.id()).stream().map(Object::toString).collect(Collectors.toList());
    }

    /**
     * The chain's installed state without the switch rules another chain holds too (chains sharing an ingress point
     * may install the same entry, e.g. a deny rule or the default drop): removing the chain must leave them.
     */
    InstalledState withoutShared(InstalledState st) {
        Set<Object> others = entriesOfOthers(st.chainId());
        return st.withSwitchRules(st.switchRules().stream()
                .filter(r -> !others.contains(Deployer.entry(r.rule()))).collect(Collectors.toList()));
    }

    /** Table entries of the switch rules every other chain installed. */
    private Set<Object> entriesOfOthers(ChainId id) {
        Set<Object> out = new HashSet<>();
        store.installed().snapshot().values().stream().filter(st -> !st.chainId().equals(id))
                .forEach(st -> st.switchRules().forEach(r -> out.add(Deployer.entry(r.rule()))));
        return out;
    }

    /** Forgets the chain's installed state, placement, backups (armed ones taken out of the switches) and tags. */
    void releasePlacement(ChainId id) {
        dataPlane.disarm(id, List.of());
        store.installed().remove(id);
        store.placements().remove(id);
        store.backups().remove(id);
        tags.release(id);
    }

    /**
     * Takes out the link backups armed for the chain's previous rules, its rules now {@code primary} (a chain moved
     * to another server keeps its record; its new backups are armed by the refresh that follows).
     */
    void disarm(ChainId id, List<InstalledRule> primary) {
        dataPlane.disarm(id, primary);
    }

    /**
     * Removes what the chain's record says it installed and releases its placement, before it is brought up again
     * from its stored definition ({@link ChainManager#bringUpAgain}).
     */
    void clear(Chain c) {
        List<String> left = tearDown(c);
        if (!left.isEmpty()) {
            log.warn("Chain {}: not removed before bringing it up again: {}", c.id(), left);
        }
        releasePlacement(c.id());
        compilers.forget(c.id());
    }
}
