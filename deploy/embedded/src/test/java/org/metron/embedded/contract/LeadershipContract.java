package org.metron.embedded.contract;

import org.junit.After;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/**
 * What the controller core may assume of {@link Leadership} for the chains an instance runs for (spi/Leadership),
 * asked of ONOS's implementation on one node and of the embedded host's. The core joins every chain it knows
 * ({@code ChainOwnership}) before it asks about it; what an implementation answers for a chain nobody joined is
 * outside the contract (the embedded host's one instance owns everything, an ONOS node nothing it did not run for).
 */
public abstract class LeadershipContract {
    private static final long WAIT_MS = 2_000;
    private static final long QUIET_MS = 300;

    private final Leadership leadership = leadership();
    private final BlockingQueue<ChainId> gained = new LinkedBlockingQueue<>();
    private final Consumer<ChainId> listener = gained::add;
    private final ChainId a = ChainId.of("a");
    private final ChainId b = ChainId.of("b");

    /** A fresh implementation, running. */
    protected abstract Leadership leadership();

    /** Stops what {@link #leadership()} started. */
    protected void stop() {
    }

    @After
    public void tearDown() {
        leadership.removeListener(listener);
        stop();
    }

    private List<ChainId> heard(int n) throws InterruptedException {
        List<ChainId> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ChainId c = gained.poll(WAIT_MS, TimeUnit.MILLISECONDS);
            if (c != null) {
                out.add(c);
            }
        }
        return out;
    }

    private void hearsNothingMore() throws InterruptedException {
        assertNull("a listener told of a gain nobody made", gained.poll(QUIET_MS, TimeUnit.MILLISECONDS));
    }

    @Test
    public void joiningOwnsTheChainAndTellsTheListenersOnce() throws InterruptedException {
        leadership.addListener(listener);
        leadership.join(a);
        assertTrue(leadership.actsFor(a));
        Optional<String> owner = leadership.owner(a);
        assertTrue(owner.isPresent());
        assertEquals(List.of(a), heard(1));
        leadership.join(a); // again, as every sweep does
        assertTrue(leadership.actsFor(a));
        assertEquals(owner, leadership.owner(a));
        hearsNothingMore();
    }

    @Test
    public void chainsAreOwnedApartByTheSameInstance() throws InterruptedException {
        leadership.addListener(listener);
        leadership.join(a);
        leadership.join(b);
        assertEquals(Set.of(a, b), Set.copyOf(heard(2)));
        assertTrue(leadership.actsFor(a) && leadership.actsFor(b));
        assertEquals(leadership.owner(a), leadership.owner(b));
        hearsNothingMore();
    }

    @Test
    public void aChainReleasedAndJoinedAgainIsGainedAgain() throws InterruptedException {
        leadership.addListener(listener);
        leadership.join(a);
        assertEquals(List.of(a), heard(1));
        leadership.release(a);
        leadership.join(a);
        assertEquals(List.of(a), heard(1));
        assertTrue(leadership.actsFor(a));
        hearsNothingMore();
    }

    /** The fencing token (agent.proto owner_token): present while owning, never lower for a later gain. */
    @Test
    public void anOwnedChainHasATermThatNeverGoesBack() {
        leadership.join(a);
        long first = leadership.term(a).orElseThrow();
        assertTrue(first > 0);
        assertEquals(first, leadership.term(a).getAsLong());
        leadership.release(a);
        leadership.join(a);
        assertTrue(leadership.term(a).orElseThrow() >= first);
    }

    @Test
    public void releasingWhatWasNeverJoinedChangesNothing() throws InterruptedException {
        leadership.addListener(listener);
        leadership.release(a);
        leadership.join(a);
        assertEquals(List.of(a), heard(1));
        hearsNothingMore();
    }

    @Test
    public void aRemovedListenerHearsNothing() throws InterruptedException {
        leadership.addListener(listener);
        leadership.removeListener(listener);
        leadership.join(a);
        assertTrue(leadership.actsFor(a));
        hearsNothingMore();
    }
}
