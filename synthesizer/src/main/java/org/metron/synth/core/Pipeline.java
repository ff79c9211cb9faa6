package org.metron.synth.core;

import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.SynthStats;
import org.metron.synth.TargetProfile;
import org.metron.synth.compile.Compiler;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Runs the synthesis phases in order: parse, synthesize, split + compile. */
public final class Pipeline {
    private Pipeline() {
    }

    /** See {@link org.metron.synth.Synthesizer#compile}. */
    public static CompiledChain run(ChainSpec chain, TargetProfile target) {
        Map<String, Long> phases = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        ChainModel model = new ChainModel(chain);
        long t1 = System.nanoTime();
        Synthesis syn = Synthesis.of(model);
        syn.checkLimits();
        long t2 = System.nanoTime();
        Compiler.Result r = Compiler.compile(syn, target, model.egressNames());
        Map<Integer, List<Integer>> replyAnswers = syn.replyAnswers();
        long t3 = System.nanoTime();
        phases.put("parse", t1 - t0);
        phases.put("synthesize", t2 - t1);
        phases.put("split+compile", t3 - t2);
        SynthStats stats = new SynthStats(r.classes.size(), syn.forward.size() + syn.reply.size(),
                r.rules.size() + r.replyRules.size(), r.softwareEntries, phases);
        return new CompiledChain(chain.name(), target, r.classes, r.groups, r.rules, r.replyRules, model.egressNames(),
                stats, replyAnswers);
    }
}
