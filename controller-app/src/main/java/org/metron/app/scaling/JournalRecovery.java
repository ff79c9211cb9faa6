package org.metron.app.scaling;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.impl.ChainFence;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.scaling.ScalingEvent.Outcome;
import org.metron.app.scaling.ScalingOperation.Step;
import org.metron.app.spi.MetronServer;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

import static org.metron.app.scaling.OperationPlans.remoteGroup;

/**
 * Completes or rolls back the scaling operations a previous controller left unfinished, from the step its
 * journal ({@link ScalingStore#operations()}) records: past the re-tag forward, before it back.
 */
final class JournalRecovery {
    private static final Logger log = LoggerFactory.getLogger(JournalRecovery.class);

    private final OperationRunner runner;

    JournalRecovery(OperationRunner runner) {
        this.runner = runner;
    }

    /**
     * Completes (re-tag done) or rolls back (not yet) every operation the journal holds for a chain {@code owned}
     * accepts: run at start, before the monitor decides anything, for the chains this instance owns, and again for
     * a chain whose owner stopped mid-operation once this instance owns it. An operation whose chain was deleted
     * meanwhile is dropped (its removal took everything of it off); one that cannot be recovered is logged and left,
     * never failing the others.
     *
     * @return the history entries recorded
     */
    public List<ScalingEvent> recover(Predicate<ChainId> owned) {
        List<ScalingEvent> out = new ArrayList<>();
        for (ScalingOperation op : runner.journal.inProgress()) {
            if (!owned.test(op.chain())) {
                continue;
            }
            synchronized (runner.lock(op.chain())) {
                try (ChainFence.Op fence = runner.fence(op.chain())) {
                    // a chain the operator deleted is never scaled again: its removal takes what the operation left
                    Optional<Chain> chain = runner.store.chains().get(op.chain()).map(Versioned::value);
                    if (chain.isEmpty() || chain.get().markedForRemoval()) {
                        runner.journal.operations().remove(op.chain());
                        log.warn("Not recovering {} of {}: the chain was deleted", op.kind(), op.chain());
                        continue;
                    }
                    if (runner.recorded(op)) {
                        // its owner ended it and stopped before removing its journal entry (OperationRunner#finish)
                        runner.journal.operations().remove(op.chain());
                        log.info("{} of {} had ended (history entry found); journal entry removed", op.kind(),
                                op.chain());
                        continue;
                    }
                    try {
                        recoverOne(op, out);
                    } catch (RuntimeException e) {
                        log.warn("Recovery of {} of {} failed: {}", op.kind(), op.chain(), e.toString());
                    }
                }
            }
        }
        return out;
    }

    /** {@link #recover} of one operation; caller holds the chain's lock. */
    private void recoverOne(ScalingOperation op, List<ScalingEvent> out) {
        Optional<MetronServer> server = op.before().server().flatMap(runner.servers::server);
        if (server.isEmpty()) {
            log.warn("Cannot recover {} of {}: server {} not registered", op.kind(), op.chain(),
                    op.before().server());
            return;
        }
        log.info("Recovering {} of {} from step {}", op.kind(), op.chain(), op.step());
        Optional<MetronServer> remote = remoteGroup(op).flatMap(GroupAssignment::server)
                .flatMap(runner.servers::server);
        if (remoteGroup(op).isPresent() && remote.isEmpty()) {
            log.warn("Cannot recover {} of {}: the other server of {} is not registered", op.kind(),
                    op.chain(), op.other());
            return;
        }
        if (remote.isPresent() && (op.step().compareTo(Step.SWITCHED) >= 0 || op.kind() == Kind.MERGE)) {
            try {
                // a merge back stopped before its re-tag: the chain's server restores the kept group
                out.add(op.step().compareTo(Step.SWITCHED) >= 0
                        ? runner.runRemote(op, server.get(), remote.get().agent(), new StepTimer())
                        : rollbackEvent(op, new RemoteSteps(runner, server.get().agent(), remote.get().agent(), op)
                                .rollback(op)));
            } catch (MetronException e) {
                log.warn("Recovery of {} failed: {}", op, e.getMessage());
            }
        } else if (remote.isPresent()) {
            out.add(rollbackEvent(op, new RemoteSteps(runner, server.get().agent(), remote.get().agent(), op)
                    .rollback(op)));
        } else if (op.step().compareTo(Step.SWITCHED) >= 0) {
            try {
                out.add(runner.runLocal(op, server.get(), new StepTimer()));
            } catch (MetronException e) {
                log.warn("Recovery of {} failed: {}", op, e.getMessage());
            }
        } else {
            out.add(rollbackEvent(op, new LocalSteps(runner, server.get().agent(), runner.compiled.compiled(op.chain()))
                    .rollback(op)));
        }
    }

    /**
     * Records the history entry of an operation a restarted controller rolled back. A rollback that left something
     * (a switch whose master died with the previous owner refuses until ONOS moves its mastership, an agent not
     * answering yet) is not recorded: the operation stays journalled and is rolled back again on the owner's retry
     * schedule ({@code ScalingManager}), each step removing only what is still there.
     *
     * @throws IllegalStateException naming what is left, when the rollback is incomplete (logged by
     *         {@link #recover}, which goes on with the other chains)
     */
    private ScalingEvent rollbackEvent(ScalingOperation op, List<String> left) {
        if (!left.isEmpty()) {
            throw new IllegalStateException("rolling back " + op.kind() + " of " + op.chain()
                    + " from step " + op.step() + " left " + left + "; the operation stays journalled");
        }
        return runner.finish(runner.event(op, Outcome.ROLLED_BACK, "controller restarted at step " + op.step()
                + " (rolled back)", op.before(), ""));
    }
}
