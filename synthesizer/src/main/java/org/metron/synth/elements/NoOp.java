package org.metron.synth.elements;

import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

/**
 * Elements that leave headers and verdicts alone: Counter, AverageCounter (monitors: the agent counts per
 * class anyway), Queue, SetIPChecksum (checksums are always recomputed on write), Print.
 */
public final class NoOp extends Element {
    NoOp(String nf, ElementDecl decl) {
        super(nf, decl);
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
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        out.emit(0, s);
    }
}
