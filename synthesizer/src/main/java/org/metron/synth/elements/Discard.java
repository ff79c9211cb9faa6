package org.metron.synth.elements;

import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

/** Discard: drops everything. */
public final class Discard extends Element {
    Discard(String nf, ElementDecl decl) {
        super(nf, decl);
        requireArgs(0, 0);
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return 0;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        if (run.trace != null) {
            run.droppedBy = id();
        }
        return Out.DROP;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        out.emit(Out.DROP, s);
    }
}
