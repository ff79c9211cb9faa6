package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.spi.Leadership;
import org.metron.app.store.ChainTerms;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The chain operation the calling thread runs and the ownership term it started with: every switch rule, group and
 * NIC rule write of the operation is checked against it right before it is issued ({@link #refusal}, called by
 * {@link FencedSwitches} and {@link FencedAgent}, the paths every such write takes). A switch has no owner token
 * (agent.proto owner_token fences pipelines in the agent), so the check is this instance's: once it no longer holds
 * the term the operation started with (it lost the chain, maybe regained it with a newer term), the write is not
 * sent and the operation stops with NOT_LEADER, its rollback too (what it would undo may be the new owner's). What
 * this instance does not know yet (a partition or GC pause not noticed) the store tells: every operation claims its
 * term in {@link ChainTerms} when it begins, and a write is refused too once a newer term has been claimed there. A
 * write already checked when the new owner claims goes out (the check and the write are not one step); the agent's
 * token check still stops such a pipeline change (docs/contracts.md#chain-ownership).
 * <p>
 * An operation starts where its chain's lock is taken ({@link #begin}, try-with-resources); an operation of another
 * chain begun inside it (nested) fences the writes until it ends. A write made outside any operation is not fenced
 * (the core begins one wherever it takes a chain's lock). The scope is the thread's: work an operation hands to
 * another thread carries it ({@link #carried}).
 */
public final class ChainFence {
    private static final ThreadLocal<Deque<Op>> RUNNING = ThreadLocal.withInitial(ArrayDeque::new);

    private ChainFence() {
    }

    /**
     * Starts an operation of {@code chain} on this thread with the term this instance holds now by {@code leadership}
     * (none when it does not own the chain: its writes are then all refused), claimed in {@code terms} before the
     * operation reads anything: an instance still running with an older term is refused its writes from here on,
     * and what it wrote before is in the store this operation reads. Within an operation of the same chain (and
     * leadership), the outer one's term stays the one checked.
     */
    public static Op begin(Leadership leadership, ChainTerms terms, ChainId chain) {
        Objects.requireNonNull(leadership);
        Objects.requireNonNull(terms);
        Deque<Op> ops = RUNNING.get();
        Op outer = ops.peek();
        Op op;
        if (outer != null && outer.chain.equals(chain) && outer.leadership == leadership) {
            op = outer.again();
        } else {
            OptionalLong term = leadership.term(chain);
            term.ifPresent(t -> terms.claim(chain, t));
            op = new Op(leadership, terms, chain, term);
        }
        ops.push(op);
        return op;
    }

    /** The operation running on this thread (the innermost), if any. */
    static Optional<Op> current() {
        return Optional.ofNullable(RUNNING.get().peek());
    }

    /**
     * {@code work} to run on another thread within the operation this thread runs now (its writes fenced as this
     * thread's); as is outside any operation.
     */
    public static Runnable carried(Runnable work) {
        Optional<Op> op = current();
        if (op.isEmpty()) {
            return work;
        }
        return () -> {
            Deque<Op> ops = RUNNING.get();
            Op here = op.get().again();
            ops.push(here);
            try {
                work.run();
            } finally {
                here.close();
            }
        };
    }

    /**
     * Why {@code what} (a write about to be issued) must not go out: the operation it belongs to (this thread's, or
     * {@code op} captured when a staged write was made) started with a term this instance no longer holds. Empty
     * when it may go, and for a write outside any operation.
     */
    static Optional<MetronException> refusal(Optional<Op> op, String what) {
        return op.flatMap(o -> o.refusal(what));
    }

    /**
     * Throws NOT_LEADER when this thread's operation no longer holds the term it started with: before an operation
     * records what it did (a deposed instance's record would overwrite its new owner's).
     */
    public static void check(String what) {
        Optional<MetronException> refused = refusal(current(), what);
        if (refused.isPresent()) {
            throw refused.get();
        }
    }

    /** One chain operation's fence: its chain and the term it started with. */
    public static final class Op implements AutoCloseable {
        private final Leadership leadership;
        private final ChainTerms terms;
        private final ChainId chain;
        private final OptionalLong term;

        private Op(Leadership leadership, ChainTerms terms, ChainId chain, OptionalLong term) {
            this.leadership = leadership;
            this.terms = terms;
            this.chain = chain;
            this.term = term;
        }

        private Op again() {
            return new Op(leadership, terms, chain, term);
        }

        ChainId chain() {
            return chain;
        }

        /** The term the operation started with (empty: this instance did not own the chain then). */
        OptionalLong term() {
            return term;
        }

        Optional<MetronException> refusal(String what) {
            OptionalLong now = leadership.term(chain);
            if (term.isPresent() && term.equals(now)) {
                // this instance's view says it still owns the chain; the store's says whether another instance has
                // begun an operation of it with a newer term since (this one was deposed without knowing it)
                OptionalLong newest = terms.newest(chain);
                if (newest.isEmpty() || newest.getAsLong() <= term.getAsLong()) {
                    return Optional.empty();
                }
                return Optional.of(new MetronException(Fault.NOT_LEADER, what + " not sent: chain " + chain
                        + "'s operations run with term " + newest.getAsLong() + " now, newer than the term "
                        + term.getAsLong() + " this operation started with: this controller instance lost the chain "
                        + "(it has not been told yet)"));
            }
            return Optional.of(new MetronException(Fault.NOT_LEADER, what + " not sent: this controller instance "
                    + (term.isEmpty() ? "did not own chain " + chain + " when the operation started"
                    : "no longer holds chain " + chain + "'s term " + term.getAsLong() + " the operation started "
                    + "with (" + (now.isEmpty() ? "owner now: " + leadership.owner(chain).orElse("none")
                    : "its term now: " + now.getAsLong()) + ")")));
        }

        /** Ends the operation on this thread (the one that began it). */
        @Override
        public void close() {
            Deque<Op> ops = RUNNING.get();
            if (ops.peek() == this) {
                ops.pop();
            } else {
                ops.remove(this);
            }
        }
    }
}
