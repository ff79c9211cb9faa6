package org.metron.app.store;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The chains map with the one rule every writer must keep: an operator's delete is never undone. A chain marked
 * for removal (its tombstone, written by whichever instance took the DELETE) is overwritten only by a record that
 * is marked too, or removed once nothing of it is left. Unconditional writes become compare-and-set loops, so an
 * owner finishing an operation on another instance cannot write a deleted chain back to life between the read and
 * the write; such a write is dropped and logged (the owner's reconciliation then removes what the operation
 * installed).
 */
final class ChainRecords implements MetronMap<ChainId, Chain> {
    private static final Logger log = LoggerFactory.getLogger(ChainRecords.class);
    private final MetronMap<ChainId, Chain> map;

    ChainRecords(MetronMap<ChainId, Chain> map) {
        this.map = Objects.requireNonNull(map);
    }

    @Override
    public Optional<Versioned<Chain>> get(ChainId key) {
        return map.get(key);
    }

    @Override
    public boolean putIfAbsent(ChainId key, Chain value) {
        return map.putIfAbsent(key, value);
    }

    @Override
    public boolean replace(ChainId key, long version, Chain value) {
        Optional<Versioned<Chain>> now = map.get(key);
        if (now.isPresent() && now.get().version() == version && undoesDelete(now.get().value(), value)) {
            refused(value);
            return false;
        }
        return map.replace(key, version, value);
    }

    /**
     * {@link #replace(ChainId, long, Chain)} for a caller that holds the record it read ({@code read}): a version
     * names one value, so whether the write would undo a delete is known without reading the record again (one
     * Raft round instead of two in a cluster). False when the record changed since (a delete recorded meanwhile
     * among others) or the write would undo the delete read.
     */
    boolean replace(ChainId key, Versioned<Chain> read, Chain value) {
        if (undoesDelete(read.value(), value)) {
            refused(value);
            return false;
        }
        return map.replace(key, read.version(), value);
    }

    @Override
    public void put(ChainId key, Chain value) {
        while (true) {
            Optional<Versioned<Chain>> now = map.get(key);
            if (now.isEmpty()) {
                if (map.putIfAbsent(key, value)) {
                    return;
                }
            } else if (undoesDelete(now.get().value(), value)) {
                refused(value);
                return;
            } else if (map.replace(key, now.get().version(), value)) {
                return;
            }
        }
    }

    @Override
    public Optional<Chain> remove(ChainId key) {
        return map.remove(key);
    }

    @Override
    public Map<ChainId, Chain> snapshot() {
        return map.snapshot();
    }

    private static boolean undoesDelete(Chain stored, Chain next) {
        return stored.markedForRemoval() && !next.markedForRemoval();
    }

    private static void refused(Chain value) {
        log.warn("Chain {} was deleted meanwhile: its {} record is not written (the delete stands)", value.id(),
                value.state());
    }

    @Override
    public void addListener(java.util.function.Consumer<ChainId> changed) {
        map.addListener(changed);
    }

    @Override
    public void removeListener(java.util.function.Consumer<ChainId> changed) {
        map.removeListener(changed);
    }
}
