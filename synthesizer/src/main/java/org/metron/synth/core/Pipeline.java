package org.metron.synth.core;

import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.SynthesisException;
import org.metron.synth.TargetProfile;

/** Runs the synthesis phases in order: parse, synthesize, split, compile. */
public final class Pipeline {
    private Pipeline() {
    }

    /** See {@link org.metron.synth.Synthesizer#compile}. */
    public static CompiledChain run(ChainSpec chain, TargetProfile target) {
        throw new SynthesisException("synthesis is not implemented yet");
    }
}
