package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.impl.OwnedChainMoves;
import org.metron.app.impl.ReadiedCores;
import org.metron.app.impl.CompiledChains;
import org.metron.app.impl.ReplyTraffic;
import org.metron.app.impl.RulePlanner;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import static org.metron.app.scaling.OperationPlans.base;

/**
 * Carries out splits and merges hitlessly, in the step order of docs/scaling.md#steps, recording each step in
 * the journal ({@link ScalingStore#operations()}) before taking it. A failure before the switch re-tag rolls
 * everything back; from the re-tag on, the operation is completed (the switch already sends the moved classes
 * to their new tag). {@link #recover} does the same for operations a previous controller left unfinished.
 * The operations are small classes ({@link SplitOperation}, {@link ScaleOut}, {@link MergeOperation},
 * {@link LostServerMerge}, {@link JournalRecovery}) run by one {@link OperationRunner}; this is their entry point.
 *
 * <p>Concurrency: one operation per chain at a time, on the same per-chain monitor as the chain's lifecycle
 * operations and recovery ({@link ChainStore#lockFor}); chains proceed in parallel except for the short core/tag
 * reservation, shared with placement ({@link ChainStore#reservationLock}). Store writes of the chain's placement
 * and rules are compare-and-swap, so an operator's remove/update that ran meanwhile is never overwritten.
 */
public final class ScalingExecutor {
    private final OperationRunner runner;
    private final SplitOperation splits;
    private final MergeOperation merges;
    private final LostServerMerge lost;
    private final JournalRecovery recovery;
    /** The cores this instance's readied failover moves hold: free for a split that takes them back. */
    private final ReadiedCores readied;

    /**
     * @param compiled the chains' compiled form (the chain manager's: one cache)
     * @param moves   the chain manager's: a split takes back the failover move readied for its chain
     *                ({@link OwnedChainMoves#dropReadied})
     * @param app     the application id the chain's rules were installed with (rule ids depend on it)
     * @param timeout per agent call and per switch batch
     * @param clock   wall-clock milliseconds
     * @param planner plans the transit and return rules of a group placed on another server: with it, a split
     *                that finds no free core on the chain's server scales out (docs/scaling.md#scale-out)
     * @param random  draws the two servers of the two-choices placement
     * @param leadership who owns each chain (the chain manager's): an operation's switch and NIC rule writes are
     *                   fenced by the term it started with
     */
    public ScalingExecutor(ChainStore store, ScalingStore journal, ServerRegistry servers, SwitchProgrammer switches,
                           CompiledChains compiled, OwnedChainMoves moves, ApplicationId app, Duration timeout,
                           LongSupplier clock, RulePlanner planner, java.util.Random random, Leadership leadership) {
        this.runner = new OperationRunner(store, journal, servers, switches, compiled, app, timeout, clock, planner,
                leadership);
        RemotePaths paths = new RemotePaths(runner);
        this.splits = new SplitOperation(runner, new ScaleOut(runner, paths, random), moves);
        this.merges = new MergeOperation(runner, paths);
        this.lost = new LostServerMerge(runner, merges);
        this.recovery = new JournalRecovery(runner);
        this.readied = moves.readiedCores();
    }

    /** The servers' resources as last read in the background (the load monitor refreshes them). */
    ResourceCache resources() {
        return runner.resources;
    }

    /** The scaling journal (the load monitor reads the operations in progress for its free-core counts). */
    ScalingStore journal() {
        return runner.journal;
    }

    /**
     * Cores free on {@code chain}'s server for a split and on the servers it could scale out to, from the
     * resources last read in the background (the policy's view, docs/scaling.md#scale-out): {here, elsewhere};
     * here is -1 when the chain's server's resources are not at hand; elsewhere is 0 without scale-out. A core a
     * failover move readied here holds counts as free: the split takes it back ({@link ReadiedCores}).
     */
    int[] freeCores(Placement p, Collection<Placement> placements, Collection<ScalingOperation> operations) {
        DeviceId home = p.server().orElse(null);
        if (home == null) {
            return new int[]{-1, 0};
        }
        int here = runner.resources.fresh(home).map(res -> OperationRunner.freeCores(home, res, placements,
                operations, readied.reclaimable(home, null).keySet()).size()).orElse(-1);
        int elsewhere = !runner.scalesOut() ? 0 : ScaleOut.candidates(runner, home).stream()
                .mapToInt(s -> runner.resources.fresh(s.id()).map(res -> OperationRunner.freeCores(s.id(), res,
                        placements, operations, readied.reclaimable(s.id(), null).keySet()).size()).orElse(0))
                .sum();
        return new int[]{here, elsewhere};
    }

    /** Carries out a policy decision. */
    public ScalingEvent execute(ScalingDecision d, Map<Integer, Double> classRates) {
        if (d.dividesClass()) {
            return splitClass(d.chain(), d.groups().get(0), d.classId(), d.bit(), d.reason(), d.onsetMs());
        }
        return d.kind() == Kind.SPLIT
                ? split(d.chain(), d.groups().get(0), classRates, d.reason(), d.onsetMs())
                : merge(d.chain(), d.groups().get(0), d.groups().get(1), d.reason(), d.onsetMs());
    }

    /**
     * Splits a group: the half of its classes with about half the measured rate moves to a new group with a
     * new tag and core, with a copy of the group's flow state. A reply class moves with the forward classes it
     * answers, and its reply rules are re-tagged with them (docs/scaling.md#replies).
     *
     * @param classRates measured packets/s per class (balances the halves)
     * @return the history entry (also recorded); DONE, or FAILED when nothing was changed
     * @throws MetronException when a step failed (the entry, ROLLED_BACK, is recorded before)
     */
    public ScalingEvent split(ChainId chainId, String groupId, Map<Integer, Double> classRates, String reason,
                              long onsetMs) {
        return splits.split(chainId, groupId, classRates, reason, onsetMs);
    }

    /**
     * Divides one class of a group by a bit of the L4 source port (docs/scaling.md#class-split): the group keeps
     * the class's packets with the bit clear, a new group (new tag and core) takes those with it set. Each of
     * the class's offload rules becomes two rules at its priority (disjoint halves of it, so first-match order
     * holds); the new group starts with the group's flows whose key has the bit set.
     *
     * @param bit 0 (least significant) .. 15; not one the class's slice or rules already fix
     * @return the history entry (also recorded)
     * @throws MetronException when refused (recorded as FAILED) or a step failed (ROLLED_BACK)
     */
    public ScalingEvent splitClass(ChainId chainId, String groupId, int cls, int bit, String reason, long onsetMs) {
        return splits.splitClass(chainId, groupId, cls, bit, reason, onsetMs);
    }

    /**
     * Merges two groups with the same stateful operations: the retired group's classes and flow state move to
     * the kept group; its tag and core are released. The group whose tag marks the chain's egress is always
     * the one kept.
     */
    public ScalingEvent merge(ChainId chainId, String keepId, String retireId, String reason, long onsetMs) {
        return merges.merge(chainId, keepId, retireId, reason, onsetMs);
    }

    /**
     * Server {@code lost} is gone for good (its agent silent past the failover deadline, ChainManager.serverLost):
     * every group of the chain scaled out to it comes back to the chain's server as a merge would bring it back
     * (docs/scaling.md#scale-out), into the group on the chain's server it can join — one holding the other part
     * of a class it holds, else one of the compiled group it comes from, else any with the same stateful
     * operations — without asking the lost agent anything: the kept group takes its classes (and joins their
     * slices), the rules are re-tagged to the kept group and leave toward the chain's server, the transit and
     * return rules only its scale-out needed go. Its flows are lost with the server (no checkpoint of it is
     * reachable): the history entry and the chain's reason say so, with the flows it last reported.
     *
     * @param lastFlows the flows a group of the chain last reported on {@code lost}, by group id; empty if unknown
     * @return the history entries of the groups it tried to bring back: DONE for those back, ROLLED_BACK (or
     *         FAILED, rollback incomplete) for those whose merge back failed and stay placed there, to be tried
     *         again; one no group on the chain's server can take is not tried (recorded FAILED, not returned: it
     *         stays placed there until the chain changes)
     */
    public List<ScalingEvent> serverLost(ChainId chainId, DeviceId lost,
                                         Function<String, OptionalLong> lastFlows) {
        return this.lost.serverLost(chainId, lost, lastFlows);
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
        return recovery.recover(owned);
    }

    /** The chain's reply classes and what they answer (the units its groups split into). */
    public ReplyTraffic replies(ChainId id) {
        return ReplyTraffic.of(runner.compiled.compiled(id));
    }

    /**
     * The compiled group each of a placement's groups comes from (stateful key, whether it classifies), keyed by
     * placed group id.
     */
    public Map<String, ClassGroup> baseGroups(ChainId id, Placement p) {
        CompiledChain cc = runner.compiled.compiled(id);
        Map<String, ClassGroup> out = new LinkedHashMap<>();
        p.groups().forEach(g -> out.put(g.groupId(), base(cc, g.groupId())));
        return out;
    }
}
