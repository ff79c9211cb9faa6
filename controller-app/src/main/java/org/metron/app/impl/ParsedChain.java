package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.synth.ChainSpec;

import java.util.Objects;

/** A chain request after parsing and validation: what every later step works from. */
public final class ParsedChain {
    private final ChainId id;
    private final ChainSpec spec;
    private final Deployment deployment;

    ParsedChain(ChainId id, ChainSpec spec, Deployment deployment) {
        this.id = Objects.requireNonNull(id);
        this.spec = Objects.requireNonNull(spec);
        this.deployment = Objects.requireNonNull(deployment);
    }

    public ChainId id() {
        return id;
    }

    public ChainSpec spec() {
        return spec;
    }

    public Deployment deployment() {
        return deployment;
    }

    /** Canonical chain JSON (contracts format), what the store keeps. */
    public String json() {
        return spec.toJson();
    }
}
