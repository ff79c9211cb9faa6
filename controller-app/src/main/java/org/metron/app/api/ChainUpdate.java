package org.metron.app.api;

import org.metron.synth.Deployment;

import com.google.common.base.MoreObjects;

import java.util.Objects;
import java.util.Optional;

/**
 * The operator's desired new definition of a running chain (a PUT), stored with the chain beside the definition
 * that runs, until the chain's owner has applied it (the chain then runs it, and this goes) or refused it (kept,
 * with the owner's error, for whoever waits for the answer). Whatever instance took the PUT, and whichever owns
 * the chain when it is applied (an owner stopping mid-update), the operator's intent is in the store.
 */
public final class ChainUpdate {
    private final String json;
    private final Deployment deployment;
    private final MetronException.Fault refusal;
    private final String message;

    public ChainUpdate(String json, Deployment deployment) {
        this(json, deployment, null, "");
    }

    private ChainUpdate(String json, Deployment deployment, MetronException.Fault refusal, String message) {
        this.json = Objects.requireNonNull(json, "json");
        this.deployment = Objects.requireNonNull(deployment, "deployment");
        this.refusal = refusal;
        this.message = message == null ? "" : message;
    }

    /** Rebuilds a stored update (the stored format). */
    public static ChainUpdate of(String json, Deployment deployment, Optional<MetronException.Fault> refusal,
                                 String message) {
        return new ChainUpdate(json, deployment, refusal.orElse(null), message);
    }

    /** The new chain JSON, as accepted. */
    public String json() {
        return json;
    }

    public Deployment deployment() {
        return deployment;
    }

    /** Whether the owner has yet to apply it. */
    public boolean pending() {
        return refusal == null;
    }

    /** The owner's error when it refused the update (the chain runs its previous definition, untouched). */
    public Optional<MetronException.Fault> refusal() {
        return Optional.ofNullable(refusal);
    }

    /** The owner's error message when refused; empty while pending. */
    public String message() {
        return message;
    }

    /** The same update, refused by its owner with {@code e}. */
    public ChainUpdate refused(MetronException e) {
        return new ChainUpdate(json, deployment, e.fault(), e.getMessage());
    }

    /** The error the owner refused it with, to throw where the operator waits. */
    public Optional<MetronException> error() {
        return refusal().map(f -> new MetronException(f, message));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ChainUpdate)) {
            return false;
        }
        ChainUpdate u = (ChainUpdate) o;
        return json.equals(u.json) && deployment.equals(u.deployment) && refusal == u.refusal
                && message.equals(u.message);
    }

    @Override
    public int hashCode() {
        return Objects.hash(json, deployment, refusal, message);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("refusal", refusal).add("message", message).toString();
    }
}
