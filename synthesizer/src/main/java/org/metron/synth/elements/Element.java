package org.metron.synth.elements;

import org.metron.synth.SynthesisException;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

/**
 * Semantics of one Click element, twice: {@link #push} on a concrete packet (the reference interpreter) and
 * {@link #walk} on a symbolic state (synthesis). Both follow Click's documented behaviour; where Metron
 * deviates (IPv6 support, Ethernet-only Classifier offsets) the element's javadoc says so.
 */
public abstract class Element {
    protected final String nf;
    protected final ElementDecl decl;

    protected Element(String nf, ElementDecl decl) {
        this.nf = nf;
        this.decl = decl;
    }

    public String name() {
        return decl.name();
    }

    public ElementDecl decl() {
        return decl;
    }

    /** {@code nf/element}. */
    public String id() {
        return nf + "/" + decl.name();
    }

    /** Number of input ports. */
    public abstract int inputs();

    /** Number of output ports. */
    public abstract int outputs();

    /**
     * Processes a concrete packet arriving on an input.
     *
     * @return output port, or {@link Out#DROP}
     */
    public abstract int push(Packet p, int in, Run run);

    /** Emits, in first-match order, the symbolic branches of s arriving on an input; they must cover s. */
    public abstract void walk(SymState s, int in, Out out);

    /** An error about this element at its declaration. */
    public SynthesisException error(String msg) {
        return new SynthesisException(nf, decl.name(), decl.line(), decl.column(), msg);
    }

    /** An error about one of this element's arguments, at the argument. */
    public SynthesisException error(Arg a, String msg) {
        return new SynthesisException(nf, decl.name(), a.line(), a.column(), msg);
    }

    /** Wraps a state restriction so an undetermined test names this element. */
    protected SymState restrict(SymState s, org.metron.synth.hs.Cube c) {
        try {
            return s.restrict(c);
        } catch (SymState.Undetermined u) {
            throw error("unsupported construct: " + decl.className() + " tests " + u.field
                    + ", which an earlier stateful element sets per flow (allocated port or load-balancer choice)");
        }
    }

    protected void requireArgs(int min, int max) {
        int n = decl.args().size();
        if (n < min || n > max) {
            throw error(decl.className() + " takes " + (min == max ? Integer.toString(min) : min + ".." + max)
                    + " argument(s), got " + n);
        }
    }

    protected void requireIp(SymState s) {
        if (!s.ipMarked || s.stripped != 14) {
            throw error(decl.className() + " needs an IP header: put Strip(14) -> CheckIPHeader (or MarkIPHeader) "
                    + "before it");
        }
    }

    protected void requireEthernet(SymState s) {
        if (s.stripped != 0) {
            throw error(decl.className() + " needs the Ethernet header: " + s.stripped
                    + " bytes are stripped here (add Unstrip)");
        }
    }
}
