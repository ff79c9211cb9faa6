package org.metron.app.api;

import org.metron.synth.Deployment;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A stored chain: the operator's JSON (NF configs inline, exactly as accepted), its deployment, its lifecycle
 * state and, when FAILED, the reason. Immutable; state changes produce a new instance with a higher version.
 */
public final class Chain {
    private final ChainId id;
    private final String json;
    private final Deployment deployment;
    private final ChainState state;
    private final String reason;
    private final long version;
    private final ImmutableList<PendingPart> pending;
    private final ChainUpdate update;

    public Chain(ChainId id, String json, Deployment deployment, ChainState state, String reason,
                 long version) {
        this(id, json, deployment, state, reason, version, List.of());
    }

    public Chain(ChainId id, String json, Deployment deployment, ChainState state, String reason,
                 long version, List<PendingPart> pending) {
        this(id, json, deployment, state, reason, version, pending, Optional.empty());
    }

    public Chain(ChainId id, String json, Deployment deployment, ChainState state, String reason,
                 long version, List<PendingPart> pending, Optional<ChainUpdate> update) {
        this.update = update.orElse(null);
        this.id = Objects.requireNonNull(id, "id");
        this.json = Objects.requireNonNull(json, "json");
        this.deployment = Objects.requireNonNull(deployment, "deployment");
        this.state = Objects.requireNonNull(state, "state");
        this.reason = reason == null ? "" : reason;
        this.version = version;
        this.pending = pending == null ? ImmutableList.of() : ImmutableList.copyOf(pending);
    }

    public ChainId id() {
        return id;
    }

    /** The chain JSON in the format of docs/contracts.md (translated when submitted in the netcfg format). */
    public String json() {
        return json;
    }

    public Deployment deployment() {
        return deployment;
    }

    public ChainState state() {
        return state;
    }

    /** Why the chain is FAILED, DEGRADED or REMOVING, or what last happened to it (moved, rerouted); may be empty. */
    public String reason() {
        return reason;
    }

    /**
     * DEGRADED: what does not run, per device; REMOVING: what is left to remove, per device; empty otherwise.
     */
    public List<PendingPart> pending() {
        return pending;
    }

    /**
     * The operator's desired new definition (a PUT) beside the one that runs ({@link #json()}), until the owner has
     * applied it; kept when refused, with the owner's error. Empty otherwise.
     */
    public Optional<ChainUpdate> update() {
        return Optional.ofNullable(update);
    }

    /** Whether the chain has an update its owner has yet to apply. */
    public boolean updatePending() {
        return update != null && update.pending();
    }

    /** Same chain, same state, with this desired update (or none). */
    public Chain withUpdate(Optional<ChainUpdate> newUpdate) {
        return new Chain(id, json, deployment, state, reason, version + 1, pending, newUpdate);
    }

    /** Whether the operator deleted the chain: nothing may place, deploy or restore it any more. */
    public boolean markedForRemoval() {
        return state == ChainState.REMOVING;
    }

    /** Bumped on every change of the chain or its state. */
    public long version() {
        return version;
    }

    /**
     * Same chain in another state (no pending parts). A desired update stays (an owner's state change never loses
     * the operator's intent) unless the chain is deleted: a tombstone drops it.
     */
    public Chain withState(ChainState newState, String newReason) {
        return withState(newState, newReason, List.of());
    }

    /** Same chain in another state with these pending parts (a desired update as {@link #withState(ChainState, String)}). */
    public Chain withState(ChainState newState, String newReason, List<PendingPart> newPending) {
        return new Chain(id, json, deployment, newState, newReason, version + 1, newPending,
                newState == ChainState.REMOVING ? Optional.empty() : update());
    }

    /** Same id with a new definition, back to SUBMITTED (a desired update is thereby applied: it goes). */
    public Chain withDefinition(String newJson, Deployment newDeployment) {
        return new Chain(id, newJson, newDeployment, ChainState.SUBMITTED, "", version + 1);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Chain)) {
            return false;
        }
        Chain c = (Chain) o;
        return id.equals(c.id) && json.equals(c.json) && deployment.equals(c.deployment) && state == c.state
                && reason.equals(c.reason) && version == c.version && pending.equals(c.pending)
                && Objects.equals(update, c.update);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, json, deployment, state, reason, version, pending, update);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("id", id).add("state", state).add("reason", reason)
                .add("version", version).add("pending", pending).add("update", update).toString();
    }
}
