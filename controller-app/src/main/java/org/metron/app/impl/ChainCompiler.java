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
        return byProfile.computeIfAbsent(profile, p -> {
            try {
                return synthesis.compile(spec, p);
            } catch (SynthesisException e) {
                throw new MetronException(Fault.INVALID_CHAIN, e.getMessage(), e);
            }
        });
    }
}
