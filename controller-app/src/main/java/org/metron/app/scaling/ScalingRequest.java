package org.metron.app.scaling;

import com.google.common.base.MoreObjects;
import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport.Move;
import org.metron.app.api.MetronException;

import java.util.Objects;
import java.util.Optional;

/**
 * An operator's split, merge or move (a drain's) that an instance not owning the chain recorded for the owner
 * ({@link ScalingRequests}): asked, then taken by the owner, then answered with the owner's event (a move: what moved
 * where) or its refusal.
 * Immutable; stored in the scaling namespace, so its fields are plain (no Optional) and null means "not yet".
 */
public final class ScalingRequest {
    /** What is asked. */
    public enum Kind {
        /** Split group {@code first}. */
        SPLIT,
        /** Merge {@code second} (retired) into {@code first} (kept). */
        MERGE,
        /**
         * Move the chain make-before-break to server {@code first} (placement's choice when null), {@code second}
         * beginning its reason (impl.ChainMoves).
         */
        MOVE
    }

    private final String id;
    private final ChainId chain;
    private final Kind kind;
    private final String first;
    private final String second;
    private final boolean taken;
    private final ScalingEvent event;
    private final Move move;
    private final String fault;
    private final String error;

    private ScalingRequest(String id, ChainId chain, Kind kind, String first, String second, boolean taken,
                           ScalingEvent event, Move move, String fault, String error) {
        this.id = Objects.requireNonNull(id);
        this.chain = Objects.requireNonNull(chain);
        this.kind = Objects.requireNonNull(kind);
        this.first = first;
        this.second = second;
        this.taken = taken;
        this.event = event;
        this.move = move;
        this.fault = fault;
        this.error = error;
    }

    /** A new request, not yet taken. */
    public static ScalingRequest ask(String id, ChainId chain, Kind kind, String first, String second) {
        return new ScalingRequest(id, chain, kind, first, second, false, null, null, null, null);
    }

    /** The owner took it (so that no other instance runs it too). */
    ScalingRequest taken() {
        return new ScalingRequest(id, chain, kind, first, second, true, null, null, null, null);
    }

    /** The owner's answer: the operation's history entry. */
    ScalingRequest answered(ScalingEvent e) {
        return new ScalingRequest(id, chain, kind, first, second, true, Objects.requireNonNull(e), null, null, null);
    }

    /** The owner's answer to a move: what moved where. */
    ScalingRequest answered(Move m) {
        return new ScalingRequest(id, chain, kind, first, second, true, null, Objects.requireNonNull(m), null, null);
    }

    /** The owner's answer: it refused or failed before an event. */
    ScalingRequest refused(MetronException e) {
        return new ScalingRequest(id, chain, kind, first, second, true, null, null, e.fault().name(),
                String.valueOf(e.getMessage()));
    }

    public String id() {
        return id;
    }

    public ChainId chain() {
        return chain;
    }

    public Kind kind() {
        return kind;
    }

    public String first() {
        return first;
    }

    public String second() {
        return second;
    }

    public boolean isTaken() {
        return taken;
    }

    public boolean isAnswered() {
        return event != null || move != null || fault != null;
    }

    /** The owner's event; empty before the answer or when it refused. */
    public Optional<ScalingEvent> event() {
        return Optional.ofNullable(event);
    }

    /** The owner's move; empty before the answer, when it refused, or for a split or merge. */
    public Optional<Move> move() {
        return Optional.ofNullable(move);
    }

    /** The owner's refusal, as the owner threw it; empty before the answer or when it ran. */
    public Optional<MetronException> refusal() {
        return fault == null ? Optional.empty()
                : Optional.of(new MetronException(MetronException.Fault.valueOf(fault), error));
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ScalingRequest)) {
            return false;
        }
        ScalingRequest r = (ScalingRequest) o;
        return taken == r.taken && id.equals(r.id) && chain.equals(r.chain) && kind == r.kind
                && Objects.equals(first, r.first) && Objects.equals(second, r.second)
                && Objects.equals(event, r.event) && Objects.equals(move, r.move) && Objects.equals(fault, r.fault)
                && Objects.equals(error, r.error);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, chain, kind, first, second, taken, event, move, fault, error);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("id", id).add("chain", chain).add("kind", kind)
                .add("first", first).add("second", second).add("taken", taken).add("event", event)
                .add("move", move).add("fault", fault).toString();
    }
}
