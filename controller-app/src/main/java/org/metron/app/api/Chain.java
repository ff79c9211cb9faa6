package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;

import java.util.List;
import java.util.Objects;

/**
 * A stored chain: the operator's JSON (NF configs inline, exactly as accepted), its deployment, its lifecycle
 * state and, when FAILED, the reason. Immutable; state changes produce a new instance with a higher version.
 */
public final class Chain {
    private final ChainId id;
    private final String json;
    private final DeploymentSpec deployment;
    private final ChainState state;
    private final String reason;
    private final long version;
    private final ImmutableList<PendingPart> pending;

    public Chain(ChainId id, String json, DeploymentSpec deployment, ChainState state, String reason,
                 long version) {
        this(id, json, deployment, state, reason, version, List.of());
    }

    public Chain(ChainId id, String json, DeploymentSpec deployment, ChainState state, String reason,
                 long version, List<PendingPart> pending) {
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

    public DeploymentSpec deployment() {
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

    /** Whether the operator deleted the chain: nothing may place, deploy or restore it any more. */
    public boolean markedForRemoval() {
        return state == ChainState.REMOVING;
    }

    /** Bumped on every change of the chain or its state. */
    public long version() {
        return version;
    }

    /** Same chain in another state (no pending parts). */
    public Chain withState(ChainState newState, String newReason) {
        return new Chain(id, json, deployment, newState, newReason, version + 1);
    }

    /** Same chain in another state with these pending parts. */
    public Chain withState(ChainState newState, String newReason, List<PendingPart> newPending) {
        return new Chain(id, json, deployment, newState, newReason, version + 1, newPending);
    }

    /** Same id with a new definition, back to SUBMITTED. */
    public Chain withDefinition(String newJson, DeploymentSpec newDeployment) {
        return new Chain(id, newJson, newDeployment, ChainState.SUBMITTED, "", version + 1);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Chain)) {
            return false;
        }
        Chain c = (Chain) o;
        return id.equals(c.id) && json.equals(c.json) && deployment.equals(c.deployment) && state == c.state
                && reason.equals(c.reason) && version == c.version && pending.equals(c.pending);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, json, deployment, state, reason, version, pending);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("id", id).add("state", state).add("reason", reason)
                .add("version", version).add("pending", pending).toString();
    }
}
