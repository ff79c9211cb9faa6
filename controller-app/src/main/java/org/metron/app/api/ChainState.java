package org.metron.app.api;

/**
 * Lifecycle of a chain. The happy path is SUBMITTED → SYNTHESIZED → PLACED → DEPLOYED → ACTIVE; any step may
 * end in FAILED (with a reason). An ACTIVE chain whose server is lost with no other server to take it is
 * DEGRADED (its traffic does not flow) until its agent answers again and restart recovery restores it. REMOVING
 * is entered on delete, before any device is touched (the operator's intent, which nothing undoes), and the chain
 * disappears once everything it installed is gone; what could not be removed yet is the chain's pending parts.
 */
public enum ChainState {
    /** Accepted and stored, nothing computed yet. */
    SUBMITTED,
    /** Traffic classes, groups and offload rules computed. */
    SYNTHESIZED,
    /** Server, NIC, cores, tags and offload device chosen and reserved. */
    PLACED,
    /** Switch rules, NIC rules and the pipeline installed. */
    DEPLOYED,
    /** The agent reports the pipeline running. */
    ACTIVE,
    /** A step failed; everything it had installed was rolled back. See the chain's reason. */
    FAILED,
    /**
     * Deleted by the operator: being torn down, or waiting for a device to return to remove what is left on it
     * (the chain's pending parts). Nothing places or deploys a chain in this state.
     */
    REMOVING,
    /**
     * Placed, but its server is unavailable and no other server can take it: its traffic does not flow. The chain's
     * pending parts name what does not run and where. ACTIVE again once its agent answers and what it lost is
     * restored. (Appended last: the enum's order is part of the stored format.)
     */
    DEGRADED;

    /** Whether a chain in this state holds resources (placement, tags, rules) that must be released. */
    public boolean holdsResources() {
        return this == PLACED || this == DEPLOYED || this == ACTIVE || this == REMOVING || this == DEGRADED;
    }

    /** Whether a chain in this state is still being brought up (by its owner, maybe another instance). */
    public boolean bringingUp() {
        return this == SUBMITTED || this == SYNTHESIZED || this == PLACED;
    }

    /** Whether its owner still has work to do for a chain in this state (everything but ACTIVE and FAILED). */
    public boolean unsettled() {
        return this != ACTIVE && this != FAILED;
    }
}
