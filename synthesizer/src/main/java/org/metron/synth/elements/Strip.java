package org.metron.synth.elements;

import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

/** Strip(N) removes N leading bytes; Unstrip(N) puts them back (the bytes are unchanged). */
public final class Strip extends Element {
    private final int bytes;

    Strip(String nf, ElementDecl decl, boolean unstrip) {
        super(nf, decl);
        requireArgs(1, 1);
        int n;
        try {
            n = Integer.parseInt(decl.args().get(0).text().trim());
        } catch (NumberFormatException e) {
            throw error(decl.args().get(0), decl.className() + " takes a byte count, found '"
                    + decl.args().get(0).text() + "'");
        }
        if (n < 0 || n > 1500) {
            throw error(decl.args().get(0), "byte count " + n + " out of range 0..1500");
        }
        bytes = unstrip ? -n : n;
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
        run.stripped += bytes;
        if (bytes < 0) {
            run.ipMarked = run.ipMarked && run.stripped >= 0;
        }
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        if (s.stripped + bytes < 0) {
            throw error("Unstrip(" + -bytes + ") with only " + s.stripped + " bytes stripped");
        }
        out.emit(0, s.strip(bytes));
    }
}
