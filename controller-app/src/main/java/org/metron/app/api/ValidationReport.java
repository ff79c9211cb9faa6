package org.metron.app.api;

import java.util.Objects;
import java.util.Optional;

/** Answer of a dry run: what synthesis produced and where the chain would go, with nothing reserved. */
public final class ValidationReport {
    private final ChainId chainId;
    private final int classes;
    private final int groups;
    private final int offloadRules;
    private final Placement placement;
    private final String placementError;

    public ValidationReport(ChainId chainId, int classes, int groups, int offloadRules,
                            Optional<Placement> placement, String placementError) {
        this.chainId = Objects.requireNonNull(chainId);
        this.classes = classes;
        this.groups = groups;
        this.offloadRules = offloadRules;
        this.placement = placement.orElse(null);
        this.placementError = placementError == null ? "" : placementError;
    }

    public ChainId chainId() {
        return chainId;
    }

    public int classes() {
        return classes;
    }

    public int groups() {
        return groups;
    }

    public int offloadRules() {
        return offloadRules;
    }

    /** Where the chain would be placed now; empty when it cannot be (see {@link #placementError()}). */
    public Optional<Placement> placement() {
        return Optional.ofNullable(placement);
    }

    public String placementError() {
        return placementError;
    }
}
