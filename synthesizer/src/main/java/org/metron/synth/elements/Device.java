package org.metron.synth.elements;

import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

/**
 * FromDevice/FromDPDKDevice (an NF input interface) and ToDevice/ToDPDKDevice (an output interface). The
 * interface name is the first word of the first argument; the chain walker moves packets between NFs at
 * these elements, so they do nothing themselves. Also {@code input}/{@code output}, the ports of a group
 * config (the agent's wrapper): {@code [k]output} is egress k.
 */
public final class Device extends Element {
    private final boolean source;
    private final String iface;

    Device(String nf, ElementDecl decl, boolean source) {
        super(nf, decl);
        this.source = source;
        String cls = decl.className();
        if (cls.equals("input") || cls.equals("output")) {
            requireArgs(0, 0);
            iface = cls;
        } else {
            if (decl.args().isEmpty()) {
                throw error(cls + " needs the device name as first argument");
            }
            iface = Args.words(decl.args().get(0))[0];
        }
    }

    /** True for FromDevice/FromDPDKDevice/input. */
    public boolean isSource() {
        return source;
    }

    /** Device (interface) name. */
    public String iface() {
        return iface;
    }

    @Override
    public int inputs() {
        return source ? 0 : decl.className().equals("output") ? 64 : 1;
    }

    @Override
    public int outputs() {
        return source ? 1 : 0;
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
