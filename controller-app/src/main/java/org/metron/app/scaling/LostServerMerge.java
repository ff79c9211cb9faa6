package org.metron.app.scaling;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.impl.ChainFence;
import org.metron.app.scaling.ScalingDecision.Kind;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.metron.app.scaling.OperationPlans.base;

/**
 * Brings the groups a chain scaled out to a lost server back to the chain's server, as a merge back would,
 * without asking the lost agent anything (docs/scaling.md#scale-out).
 */
final class LostServerMerge {
    private static final Logger log = LoggerFactory.getLogger(LostServerMerge.class);

    private final OperationRunner runner;
    private final MergeOperation merges;

    LostServerMerge(OperationRunner runner, MergeOperation merges) {
        this.runner = runner;
        this.merges = merges;
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
        List<ScalingEvent> out = new ArrayList<>();
        synchronized (runner.lock(chainId)) {
            try (ChainFence.Op fence = runner.fence(chainId)) {
                List<String> there = runner.context(chainId).placement.value().groups().stream()
                        .filter(g -> g.server().equals(Optional.of(lost))).map(GroupAssignment::groupId)
                        .collect(Collectors.toList());
                for (String id : there) {
                    long start = runner.clock.getAsLong();
                    StepTimer timer = new StepTimer();
                    Ctx c = runner.context(chainId);
                    GroupAssignment b = c.group(id);
                    OptionalLong flows = lastFlows.apply(id);
                    String lostState = "its flow state is lost with the server ("
                            + (flows.isPresent() ? flows.getAsLong() + " flows at its last report"
                            : "flow count unknown")
                            + "; no checkpoint of it is reachable)";
                    Optional<GroupAssignment> keep = c.placement.value().localGroups().stream()
                            .filter(a -> MergeOperation.mergeRefusal(c, a, b) == null)
                            .min(Comparator.comparingInt(a -> joinRank(c, a, b)));
                    if (keep.isEmpty()) {
                        // recorded FAILED; the other groups there are still brought back
                        log.warn("Chain {}: {}", chainId, runner.refuse(chainId, Kind.MERGE, List.of(id),
                                "server " + lost + " lost", start, start, "no group on " + c.server.id()
                                + " can take group " + id
                                + " of the lost server (classes " + b.classesText() + "): it stays placed there; "
                                + lostState).getMessage());
                        continue;
                    }
                    GroupAssignment a = keep.get();
                    String reason = "server " + lost + " lost: group " + id + " (classes " + b.classesText()
                            + ") merged back into " + a.groupId() + " on " + c.server.id() + "; " + lostState;
                    ScalingOperation op = merges.mergeOperation(c, a, b, reason, start, start, false);
                    runner.journal.operations().put(chainId, op);
                    timer.lap("reserve");
                    log.warn("Chain {}: {}", chainId, reason);
                    try {
                        out.add(runner.runRemote(op, c.server, null, timer));
                    } catch (MetronException e) {
                        // rolled back before the re-tag: the group stays placed there; its entry, just recorded under
                        // the chain's lock, is the history's last
                        log.warn("Chain {}: group {} of lost server {} not brought back: {}", chainId, id, lost,
                                e.getMessage());
                        List<ScalingEvent> h = runner.journal.history(chainId);
                        out.add(h.get(h.size() - 1));
                        continue;
                    }
                    runner.store.chains().get(chainId).map(Versioned::value).ifPresent(ch -> runner.store.chains()
                            .put(chainId, ch.withState(ch.state(), reason)));
                }
            }
        }
        return out;
    }

    /**
     * How well {@code a} suits a group {@code b} of a lost server (lower is better): a group holding part of a
     * class {@code b} holds (the group it was split from), then one of its compiled group, then any.
     */
    private static int joinRank(Ctx c, GroupAssignment a, GroupAssignment b) {
        if (a.classIds().stream().anyMatch(b.classIds()::contains)) {
            return 0;
        }
        return base(c.compiled, a.groupId()).id() == base(c.compiled, b.groupId()).id() ? 1 : 2;
    }
}
