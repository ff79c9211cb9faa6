package org.metron.synth;

import org.metron.synth.core.Pipeline;

/**
 * Entry point: compiles a chain of Click NFs into traffic classes, offload rules for a target device, and the
 * per-group Click configurations the agent runs. Stateless and thread-safe.
 */
public final class Synthesizer {
    private Synthesizer() {
    }

    /**
     * Synthesizes, splits and compiles a chain.
     *
     * @param chain  the chain
     * @param target what the offload device can do
     * @return classes, groups, offload rules, egress names and statistics
     * @throws SynthesisException for bad Click (NF, element, line:col) or constructs that cannot be synthesized
     */
    public static CompiledChain compile(ChainSpec chain, TargetProfile target) {
        return Pipeline.run(chain, target);
    }
}
