package org.metron.synth;

import java.util.Objects;

/** An NF interface named {@code nf.iface} in chain JSON (the device name of a From/To(DPDK)Device). Immutable. */
public final class InterfaceRef {
    private final String nf;
    private final String iface;

    private InterfaceRef(String nf, String iface) {
        this.nf = Objects.requireNonNull(nf, "nf");
        this.iface = Objects.requireNonNull(iface, "iface");
    }

    /** Creates a reference. */
    public static InterfaceRef of(String nf, String iface) {
        return new InterfaceRef(nf, iface);
    }

    /**
     * Parses {@code nf.iface} (split at the first dot: NF names have no dots, device names may).
     *
     * @throws SynthesisException naming the text if it is not of that form
     */
    public static InterfaceRef parse(String text, String where) {
        int dot = text.indexOf('.');
        if (dot <= 0 || dot == text.length() - 1) {
            throw new SynthesisException("chain JSON: " + where + " '" + text + "' is not of the form nf.iface");
        }
        if (text.chars().anyMatch(c -> c == '\n' || c == '\r' || c == '\u2028' || c == '\u2029')) {
            // chain.schema.json's iface pattern ("." matches no line terminator): no line breaks in a name
            throw new SynthesisException("chain JSON: " + where + " '" + text.replaceAll("\\R", "\\\\n")
                    + "' has a line break in it");
        }
        return new InterfaceRef(text.substring(0, dot), text.substring(dot + 1));
    }

    public String nf() {
        return nf;
    }

    public String iface() {
        return iface;
    }

    @Override
    public String toString() {
        return nf + "." + iface;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof InterfaceRef && ((InterfaceRef) o).nf.equals(nf) && ((InterfaceRef) o).iface.equals(iface);
    }

    @Override
    public int hashCode() {
        return nf.hashCode() * 31 + iface.hashCode();
    }
}
