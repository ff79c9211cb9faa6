package org.metron.app.impl;

import org.metron.app.api.MetronException;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.SwitchProgrammer;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The switches as the controller core writes them: each rule or group write and removal of a chain operation is
 * checked right before it is issued against the ownership term the operation started with ({@link ChainFence}); a
 * refused one is not sent and fails NOT_LEADER. A staged batch is checked when it is committed (what makes it live),
 * against the operation that staged it. Reads pass through. Both hosts' core (Deployer, ChainManager,
 * ScalingManager) wrap their switch programmer in it.
 */
public final class FencedSwitches implements SwitchProgrammer {
    private final SwitchProgrammer switches;

    private FencedSwitches(SwitchProgrammer switches) {
        this.switches = Objects.requireNonNull(switches);
    }

    /** {@code switches} fenced (as is when fenced already). */
    public static SwitchProgrammer of(SwitchProgrammer switches) {
        return switches instanceof FencedSwitches ? switches : new FencedSwitches(switches);
    }

    private static <T> CompletableFuture<T> fenced(Optional<ChainFence.Op> op, String what,
                                                   Supplier<CompletableFuture<T>> write) {
        return ChainFence.refusal(op, what).<CompletableFuture<T>>map(CompletableFuture::failedFuture)
                .orElseGet(write); // as the programmer answers
    }

    private static <T> CompletableFuture<T> fenced(String what, Supplier<CompletableFuture<T>> write) {
        return fenced(ChainFence.current(), what, write);
    }

    @Override
    public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
        return fenced("installing " + rules.size() + " rules on " + device, () -> switches.install(device, rules));
    }

    @Override
    public CompletableFuture<Staged> stage(DeviceId device, List<FlowRule> rules, Collection<FlowRule> removals) {
        Optional<ChainFence.Op> op = ChainFence.current();
        return switches.stage(device, rules, removals).thenApply(s -> new FencedStaged(op, "committing "
                + rules.size() + " rules" + (removals.isEmpty() ? "" : " and " + removals.size() + " removals")
                + " on " + device, s));
    }

    /**
     * Commits batches staged here by one operation together: the fence is checked once, right before they are all
     * issued, instead of once before each (in a cluster each check reads the store's newest term, a Raft round, and
     * the next batch went out only after it: two devices' commits started 70-120 ms apart in the 3-node Karaf test).
     * Refused, none is issued. Batches not staged here, or by different operations, are committed one by one.
     *
     * @return each batch's commit, in order
     */
    public static List<CompletableFuture<Void>> commitAll(List<Staged> staged) {
        Optional<ChainFence.Op> op = staged.isEmpty() || !(staged.get(0) instanceof FencedStaged) ? Optional.empty()
                : ((FencedStaged) staged.get(0)).op;
        boolean oneOperation = op.isPresent() && staged.stream().allMatch(s -> s instanceof FencedStaged
                && ((FencedStaged) s).op.equals(op));
        if (!oneOperation) {
            return staged.stream().map(Staged::commit).collect(Collectors.toList());
        }
        Optional<MetronException> refused = ChainFence.refusal(op, staged.stream()
                .map(s -> ((FencedStaged) s).what).collect(Collectors.joining(", ")));
        return staged.stream().map(s -> refused.<CompletableFuture<Void>>map(CompletableFuture::failedFuture)
                .orElseGet(((FencedStaged) s).staged::commit)).collect(Collectors.toList());
    }

    /** A batch staged by an operation: checked against its fence when it is committed. */
    private static final class FencedStaged implements Staged {
        private final Optional<ChainFence.Op> op;
        private final String what;
        private final Staged staged;

        FencedStaged(Optional<ChainFence.Op> op, String what, Staged staged) {
            this.op = op;
            this.what = what;
            this.staged = staged;
        }

        @Override
        public CompletableFuture<Void> commit() {
            return fenced(op, what, staged::commit);
        }

        @Override
        public CompletableFuture<Void> discard() {
            return staged.discard(); // nothing staged was ever live
        }
    }

    @Override
    public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
        return fenced("removing " + rules.size() + " rules from " + device, () -> switches.remove(device, rules));
    }

    @Override
    public CompletableFuture<Void> addGroups(DeviceId device, List<FailoverGroup> groups) {
        return fenced("adding " + groups.size() + " groups to " + device, () -> switches.addGroups(device, groups));
    }

    @Override
    public CompletableFuture<Void> removeGroups(DeviceId device, Collection<FailoverGroup> groups) {
        return fenced("removing " + groups.size() + " groups from " + device,
                () -> switches.removeGroups(device, groups));
    }

    // ---- passed through ------------------------------------------------------------------------------------

    @Override
    public Collection<FlowEntry> entries(DeviceId device) {
        return switches.entries(device);
    }

    @Override
    public int ruleCount(DeviceId device) {
        return switches.ruleCount(device);
    }

    @Override
    public boolean supportsFailoverGroups() {
        return switches.supportsFailoverGroups();
    }

    @Override
    public CompletableFuture<List<FailoverGroup>> readGroups(DeviceId device) {
        return switches.readGroups(device);
    }

    /** The programmer's, so logs read as before. */
    @Override
    public String toString() {
        return switches.toString();
    }
}
