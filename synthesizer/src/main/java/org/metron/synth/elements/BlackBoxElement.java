package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code BlackBoxNF(NAME n, PROGRAM p, ...)}: the agent's element for a black-box NF (docs/blackbox.md), which the
 * synthesizer writes into group configs where a chain's black box was. Here it hands the packet to the run's
 * black boxes ({@link Run#blackBox}), as the reference interpreter does at the chain's black-box NF. A chain's
 * own Click may not use it: a black box is declared in the chain JSON, so the synthesizer knows what it may do.
 */
public final class BlackBoxElement extends Element {
    private final String name;
    private final String args;

    BlackBoxElement(String nf, ElementDecl decl) {
        super(nf, decl);
        String n = null;
        List<String> all = new ArrayList<>();
        for (Arg a : decl.args()) {
            String[] w = Args.words(a);
            if (w[0].equals("NAME") && w.length == 2) {
                n = w[1];
            }
            all.add(a.text().trim());
        }
        if (n == null) {
            throw error("BlackBoxNF needs 'NAME nf'");
        }
        this.name = n;
        this.args = String.join(", ", all);
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
        return run.blackBox(name, args, p) ? 0 : Out.DROP;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        throw error("unsupported construct: BlackBoxNF in an NF's Click; declare the NF as \"blackbox\" in the chain "
                + "JSON instead (docs/blackbox.md), so the synthesizer knows what it may do to packets");
    }
}
