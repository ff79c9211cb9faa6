package org.metron.synth.elements;

import org.metron.synth.SynthesisException;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.IdleTimeouts;
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

    /**
     * The shortest time, in seconds, after which this element may forget an idle flow's state (a new packet of
     * the flow then meets new state); infinite for elements without per-flow state.
     */
    public double shortestIdleTimeout() {
        return Double.POSITIVE_INFINITY;
    }

    /**
     * Idle timeouts from Click's IPRewriter keywords ({@code keyword} gives each one's value, null if absent):
     * TCP_TIMEOUT / TIMEOUT, TCP_NODATA_TIMEOUT, TCP_DONE_TIMEOUT, UDP_TIMEOUT, UDP_STREAMING_TIMEOUT (UDP_TIMEOUT
     * unless given), Click's defaults for the others. The agent's IPRewriter and SynthRewriter read them alike.
     */
    protected IdleTimeouts idleTimeouts(java.util.function.Function<String, Arg> keyword) {
        IdleTimeouts d = IdleTimeouts.CLICK_DEFAULTS;
        double udp = timeout(keyword, "UDP_TIMEOUT", d.udp);
        return new IdleTimeouts(timeout(keyword, "TCP_TIMEOUT", timeout(keyword, "TIMEOUT", d.tcp)),
                timeout(keyword, "TCP_NODATA_TIMEOUT", d.tcpNodata), timeout(keyword, "TCP_DONE_TIMEOUT", d.tcpDone),
                udp, timeout(keyword, "UDP_STREAMING_TIMEOUT", udp));
    }

    private double timeout(java.util.function.Function<String, Arg> keyword, String name, double dflt) {
        Arg a = keyword.apply(name);
        return a == null ? dflt : seconds(a, name);
    }

    /**
     * A Click time argument in seconds, as Click's {@code cp_seconds} reads it: a number with an optional unit
     * ({@code s}, {@code sec}, {@code ms}, {@code m}/{@code min}, {@code h}/{@code hr}, {@code d}/{@code day}).
     */
    protected double seconds(Arg a, String keyword) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)\\s*([a-z]*)")
                .matcher(a.text().trim());
        if (m.matches()) {
            double v = Double.parseDouble(m.group(1));
            switch (m.group(2)) {
                case "": case "s": case "sec": case "secs": return v;
                case "ms": case "msec": return v / 1000;
                case "m": case "min": case "mins": return v * 60;
                case "h": case "hr": case "hrs": return v * 3600;
                case "d": case "day": case "days": return v * 86400;
                default: break;
            }
        }
        throw error(a, keyword + ": expected a time (seconds, or a number with s, ms, min, h or d), found '"
                + a.text().trim() + "'");
    }

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
