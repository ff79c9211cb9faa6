package org.metron.app.api;

import com.google.common.base.MoreObjects;

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

    public Chain(ChainId id, String json, DeploymentSpec deployment, ChainState state, String reason,
                 long version) {
        this.id = Objects.requireNonNull(id, "id");
        this.json = Objects.requireNonNull(json, "json");
        this.deployment = Objects.requireNonNull(deployment, "deployment");
        this.state = Objects.requireNonNull(state, "state");
        this.reason = reason == null ? "" : reason;
        this.version = version;
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

    /** Why the chain is FAILED; empty otherwise. */
    public String reason() {
        return reason;
    }

    /** Bumped on every change of the chain or its state. */
    public long version() {
        return version;
    }

    /** Same chain in another state. */
    public Chain withState(ChainState newState, String newReason) {
        return new Chain(id, json, deployment, newState, newReason, version + 1);
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
                && reason.equals(c.reason) && version == c.version;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, json, deployment, state, reason, version);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("id", id).add("state", state).add("reason", reason)
                .add("version", version).toString();
    }
}
