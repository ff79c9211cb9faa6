package org.metron.app.impl;

import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.SynthesisException;
import org.metron.synth.TargetProfile;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/** One chain compiled per target profile, each profile at most once (placement asks per candidate device). */
final class ChainCompiler implements Function<TargetProfile, CompiledChain> {
    private final ChainSpec spec;
    private final Synthesis synthesis;
    private final Map<TargetProfile, CompiledChain> byProfile = new ConcurrentHashMap<>();

    ChainCompiler(ChainSpec spec, Synthesis synthesis) {
        this.spec = spec;
        this.synthesis = synthesis;
    }

    /**
     * @throws MetronException INVALID_CHAIN with the synthesizer's NF/element/line:col message
     */
    @Override
    public CompiledChain apply(TargetProfile profile) {
        CompiledChain done = byProfile.get(profile);
        if (done != null) {
            return done;
        }
        // placement asks once per candidate device, each with its own free capacity; a compile that left nothing
        // to software never ran out of capacity, so it is also the compile for any capacity that holds its rules
        for (Map.Entry<TargetProfile, CompiledChain> e : byProfile.entrySet()) {
            if (standsFor(e.getKey(), e.getValue(), profile)) {
                return e.getValue();
            }
        }
        return byProfile.computeIfAbsent(profile, p -> {
            try {
                return synthesis.compile(spec, p);
            } catch (SynthesisException e) {
                throw new MetronException(Fault.INVALID_CHAIN, e.getMessage(), e);
            }
        });
    }

    /**
     * The flow state the chain's groups declare (rewriters with CAPACITY / MAPPING_CAPACITY), for placement: taken
     * from the software-only compile, the most server groups the chain can need (each reserves its capacity).
     * Chains whose NFs declare none are not compiled for it.
     */
    FlowStateDemand flowStateDemand() {
        boolean declares = spec.nfs().stream().anyMatch(nf -> nf.click().contains("CAPACITY"));
        return declares ? FlowStateDemand.of(apply(TargetProfile.NONE)) : FlowStateDemand.none();
    }

    /**
     * Whether {@code compiled}, the chain compiled for {@code done}, is also what compiling for {@code wanted}
     * gives: same profile but for the capacity, every filter entry offloaded (none left to software), and the
     * rules it emitted within {@code wanted}'s capacity (the synthesizer stops offloading only when the next
     * entry does not fit; ChainCompilerTest pins this on the synthesizer itself).
     */
    static boolean standsFor(TargetProfile done, CompiledChain compiled, TargetProfile wanted) {
        return done.capacity() > 0 && wanted.capacity() > 0 && wanted.withCapacity(done.capacity()).equals(done)
                && compiled.stats().rulesSoftware() == 0 && compiled.stats().rulesOffloaded() < wanted.capacity();
    }
}
