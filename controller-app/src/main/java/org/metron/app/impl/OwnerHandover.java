package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ChainUpdate;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What an instance that does not own a chain does with an operator's write, so that any instance takes any request:
 * it records the operator's intent in the store (a new chain SUBMITTED, a desired update beside the running
 * definition, a deleted one's REMOVING tombstone), which
 * every instance sees, and waits a while for the owner ({@link ChainOwnership} picks the intent up within a round)
 * to act on it. The answer is the chain as the owner left it; one still in progress when the wait ends is answered
 * as it is, and the owner carries on.
 */
final class OwnerHandover {
    /** How long a submission waits for the owner: a bring-up includes the agents' pipeline builds. */
    static final Duration SUBMIT_WAIT = Duration.ofSeconds(45);
    /** How long a delete waits for the owner's first removal attempt. */
    static final Duration REMOVE_WAIT = Duration.ofSeconds(15);
    private static final long POLL_MS = 50;

    private final MetronMap<ChainId, Chain> chains;

    OwnerHandover(MetronMap<ChainId, Chain> chains) {
        this.chains = Objects.requireNonNull(chains);
    }

    /**
     * The stored {@code chain} (SUBMITTED) once its owner brought it up (ACTIVE, or past DEPLOYED, whose pipeline the
     * owner has yet to see running) or gave up, or as it is after the wait.
     */
    Chain awaitBringUp(Chain chain) {
        return await(chain.id(), c -> c.isEmpty() || !(c.get().state().bringingUp() || c.get().state() == ChainState.DEPLOYED), SUBMIT_WAIT).orElseThrow(() ->
                new MetronException(Fault.UNKNOWN_CHAIN, "chain " + chain.id() + " was deleted while its owner "
                        + "brought it up"));
    }

    /**
     * The chain once its owner applied the update recorded in {@code asked} (and, when it brought the chain up
     * again, once that ended), or as it is after the wait (its update still pending: 202).
     *
     * @throws MetronException the owner's error when it refused the update; BEING_REMOVED when the chain was
     *                         deleted meanwhile; UNKNOWN_CHAIN when it is gone
     */
    Chain awaitUpdate(Chain asked) {
        ChainUpdate u = asked.update().orElseThrow();
        Predicate<Chain> mine = c -> c.update().map(x -> x.json().equals(u.json())).orElse(false);
        Chain c = await(asked.id(), now -> now.isEmpty() || now.get().markedForRemoval()
                || !(mine.test(now.get()) && now.get().updatePending())
                && !(now.get().state().bringingUp() || now.get().state() == ChainState.DEPLOYED), SUBMIT_WAIT)
                .orElseThrow(() -> new MetronException(Fault.UNKNOWN_CHAIN, "chain " + asked.id() + " was deleted "
                        + "while its owner updated it"));
        if (c.markedForRemoval()) {
            throw ChainRemoval.refusal(c, "updated");
        }
        Optional<MetronException> refused = c.update().filter(x -> mine.test(c)).flatMap(ChainUpdate::error);
        if (refused.isPresent()) {
            throw refused.get();
        }
        return c;
    }

    /**
     * Marks {@code chain} for removal and waits for the owner's removal attempt: empty when nothing of the chain is
     * left, else the chain (REMOVING) with what is left, or as the owner has not yet touched it.
     */
    Optional<Chain> remove(Versioned<Chain> chain) {
        ChainId id = chain.value().id();
        Chain tombstone = chain.value().withState(ChainState.REMOVING, "deleted", chain.value().pending());
        if (!chain.value().markedForRemoval() && !chains.replace(id, chain.version(), tombstone)) {
            throw new MetronException(Fault.INVALID_REQUEST, "chain " + id + " changed while it was being deleted; "
                    + "retry DELETE");
        }
        // judged on the one read await makes (a second read could see the chain gone after the first saw it)
        long marked = chain.value().markedForRemoval() ? chain.value().version() : tombstone.version();
        return await(id, c -> c.isEmpty() || c.get().version() != marked, REMOVE_WAIT);
    }

    private Optional<Chain> await(ChainId id, Predicate<Optional<Chain>> done, Duration wait) {
        long end = System.nanoTime() + wait.toNanos();
        while (true) {
            Optional<Chain> now = chains.get(id).map(Versioned::value);
            if (done.test(now) || System.nanoTime() > end) {
                return now;
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return now;
            }
        }
    }
}
