package org.metron.synth;

/**
 * The one error the synthesizer reports for bad input: malformed chain JSON, malformed Click, an unknown
 * element, a dangling edge, a cycle or a construct the synthesizer cannot prove equivalent.
 * <p>
 * It names where the problem is (NF, element, line:col inside the NF's Click text, 1-based) so an operator can
 * fix the input without reading a stack trace. Unchecked, like ONOS's own service exceptions: callers that
 * accept operator input catch it at the boundary and print {@link #getMessage()}.
 */
public final class SynthesisException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String nf;
    private final String element;
    private final int line;
    private final int column;
    private final String reason;

    /**
     * Creates an exception.
     *
     * @param nf      NF name, or null when the problem is not inside one NF
     * @param element element name (or class for anonymous ones), or null
     * @param line    1-based line in the NF's Click text (or the chain JSON when nf is null), 0 if unknown
     * @param column  1-based column, 0 if unknown
     * @param reason  what is wrong and what was expected
     */
    public SynthesisException(String nf, String element, int line, int column, String reason) {
        super(format(nf, element, line, column, reason));
        this.nf = nf;
        this.element = element;
        this.line = line;
        this.column = column;
        this.reason = reason;
    }

    /** Creates an exception that is not tied to an NF or element (e.g. chain-level JSON problems). */
    public SynthesisException(String reason) {
        this(null, null, 0, 0, reason);
    }

    private static String format(String nf, String element, int line, int column, String reason) {
        StringBuilder sb = new StringBuilder();
        if (nf != null) {
            sb.append("nf '").append(nf).append("'");
        }
        if (element != null) {
            sb.append(sb.length() > 0 ? ", " : "").append("element '").append(element).append("'");
        }
        if (line > 0) {
            sb.append(sb.length() > 0 ? " " : "").append("at ").append(line).append(':').append(column);
        }
        if (sb.length() > 0) {
            sb.append(": ");
        }
        return sb.append(reason).toString();
    }

    /** Returns a copy of this exception attributed to the given NF (used when an NF's Click text is parsed). */
    public SynthesisException inNf(String nfName) {
        if (nf != null) {
            return this;
        }
        SynthesisException e = new SynthesisException(nfName, element, line, column, reason);
        e.setStackTrace(getStackTrace());
        return e;
    }

    /** NF name, or null. */
    public String nf() {
        return nf;
    }

    /** Element name, or null. */
    public String element() {
        return element;
    }

    /** 1-based line, 0 if unknown. */
    public int line() {
        return line;
    }

    /** 1-based column, 0 if unknown. */
    public int column() {
        return column;
    }

    /** The bare reason, without the location prefix. */
    public String reason() {
        return reason;
    }
}
