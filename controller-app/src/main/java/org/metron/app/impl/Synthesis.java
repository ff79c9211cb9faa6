package org.metron.app.impl;

import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;

/** How the controller compiles a chain for a target profile; {@link #SYNTHESIZER} everywhere but in tests. */
@FunctionalInterface
public interface Synthesis {
    /** The real synthesizer. */
    Synthesis SYNTHESIZER = Synthesizer::compile;

    /**
     * @throws org.metron.synth.SynthesisException for chains that cannot be synthesized
     */
    CompiledChain compile(ChainSpec chain, TargetProfile profile);
}
