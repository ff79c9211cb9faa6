package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.StatefulStep;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

/**
 * SpinCycles(CYCLES n): the agent spends n cycles per packet and passes it on unchanged (docs/scaling.md).
 * Software-only work that keeps no state: it never offloads, so it is a step of its class kept in the group
 * config, and classes with different costs are different operations (different groups).
 */
public final class SpinCyclesElement extends Element {
    /** The agent's bound (agent/src/elements/spin_cycles.cc). */
    static final long MAX_CYCLES = 10_000_000L;
    private final long cycles;

    SpinCyclesElement(String nf, ElementDecl decl) {
        super(nf, decl);
        Long c = null;
        for (Arg a : decl.args()) {
            String[] w = Args.words(a);
            if (w.length != 2 || !w[0].equals("CYCLES")) {
                throw error(a, "expected 'CYCLES n', found '" + a.text().trim() + "'");
            }
            try {
                c = Long.parseLong(w[1]);
            } catch (NumberFormatException e) {
                throw error(a, "CYCLES must be an integer, found '" + w[1] + "'");
            }
            if (c < 0 || c > MAX_CYCLES) {
                throw error(a, "CYCLES " + c + " outside 0.." + MAX_CYCLES);
            }
        }
        if (c == null) {
            throw error("SpinCycles needs 'CYCLES n'");
        }
        cycles = c;
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return 1;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        run.steps.add(StatefulStep.spin(id(), cycles));
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        out.emit(0, s.step(StatefulStep.spin(id(), cycles)));
    }
}
