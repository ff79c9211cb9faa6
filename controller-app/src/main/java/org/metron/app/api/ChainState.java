package org.metron.app.api;

/**
 * Lifecycle of a chain. The happy path is SUBMITTED → SYNTHESIZED → PLACED → DEPLOYED → ACTIVE; any step may
 * end in FAILED (with a reason). REMOVING is entered on delete and the chain disappears once everything it
 * installed is gone.
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
    /** Being torn down. */
    REMOVING;

    /** Whether a chain in this state holds resources (placement, tags, rules) that must be released. */
    public boolean holdsResources() {
        return this == PLACED || this == DEPLOYED || this == ACTIVE || this == REMOVING;
    }
}
