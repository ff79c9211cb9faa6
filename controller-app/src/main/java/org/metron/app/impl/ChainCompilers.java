package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The one cache of compiled chains, per chain and definition (the chain JSON as stored; a PUT makes a new one):
 * a definition is parsed and synthesized once per target profile ({@link ChainCompiler}), whoever asks (placement,
 * failover backups, reroute, server recovery, views), and the compile its placement used is kept as placed.
 * Only the latest definition of each chain is kept.
 */
final class ChainCompilers {
    /** One definition of one chain: its compiler and, once placed, the compile the placement used. */
    private static final class Entry {
        final String json;
        final ChainCompiler compiler;
        volatile CompiledChain placed;

        Entry(String json, ChainCompiler compiler) {
            this.json = json;
            this.compiler = compiler;
        }
    }

    private final Synthesis synthesis;
    private final Map<ChainId, Entry> byChain = new ConcurrentHashMap<>();

    ChainCompilers(Synthesis synthesis) {
        this.synthesis = Objects.requireNonNull(synthesis);
    }

    /** The compiler of the chain's stored definition. */
    ChainCompiler of(Chain c) {
        return entry(c.id(), c.json(), () -> ChainRequests.parse(c.json()).spec()).compiler;
    }

    /** The compiler of a definition just parsed (a submission or update), kept for when it is stored. */
    ChainCompiler of(ParsedChain pc) {
        return entry(pc.id(), pc.json(), pc::spec).compiler;
    }

    private Entry entry(ChainId id, String json, Supplier<ChainSpec> spec) {
        Entry e = byChain.get(id);
        if (e != null && e.json.equals(json)) {
            return e;
        }
        Entry fresh = new Entry(json, new ChainCompiler(spec.get(), synthesis));
        byChain.put(id, fresh);
        return fresh;
    }

    /** The placement of {@code c} used {@code compiled} (compiled for that device's free capacity). */
    void placed(Chain c, CompiledChain compiled) {
        entry(c.id(), c.json(), () -> ChainRequests.parse(c.json()).spec()).placed = compiled;
    }

    /**
     * As {@link #placed(Chain, CompiledChain)}, by {@code compiler}, the compiler the placement ran (a PUT's, made
     * before its definition was stored): it becomes this definition's compiler, so nothing parses or synthesizes
     * the new version again (a cached compiler of the same definition stays).
     */
    void placed(Chain c, ChainCompiler compiler, CompiledChain compiled) {
        byChain.compute(c.id(), (id, e) -> e != null && e.json.equals(c.json()) ? e
                : new Entry(c.json(), compiler)).placed = compiled;
    }

    /** The chain's offload device changed (reroute from a backup): the next ask compiles for its profile. */
    void moved(ChainId id) {
        Entry e = byChain.get(id);
        if (e != null) {
            e.placed = null;
        }
    }

    /** The chain is gone, or placed again from scratch. */
    void forget(ChainId id) {
        byChain.remove(id);
    }

    /**
     * The chain compiled for the profile it was placed with: the placement's own compile when this instance placed
     * it, else compiled once from the stored definition for the placement's profile (another instance placed it),
     * or for no offload when it is not placed.
     */
    CompiledChain compiled(Chain c, Optional<Placement> p) {
        Entry e = entry(c.id(), c.json(), () -> ChainRequests.parse(c.json()).spec());
        CompiledChain placed = e.placed;
        if (placed != null && p.isPresent()) {
            return placed;
        }
        CompiledChain cc = e.compiler.apply(p.map(pl -> TargetProfile.named(pl.offloadProfile()))
                .orElse(TargetProfile.NONE));
        if (p.isPresent()) {
            e.placed = cc;
        }
        return cc;
    }
}
