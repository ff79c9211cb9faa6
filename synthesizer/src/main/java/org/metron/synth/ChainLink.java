package org.metron.synth;

import java.util.Objects;

/** An edge from one NF's output interface to the next NF's input interface. Immutable. */
public final class ChainLink {
    private final InterfaceRef from;
    private final InterfaceRef to;

    private ChainLink(InterfaceRef from, InterfaceRef to) {
        this.from = Objects.requireNonNull(from, "from");
        this.to = Objects.requireNonNull(to, "to");
    }

    /** Creates a link. */
    public static ChainLink of(InterfaceRef from, InterfaceRef to) {
        return new ChainLink(from, to);
    }

    public InterfaceRef from() {
        return from;
    }

    public InterfaceRef to() {
        return to;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChainLink && ((ChainLink) o).from.equals(from) && ((ChainLink) o).to.equals(to);
    }

    @Override
    public int hashCode() {
        return from.hashCode() * 31 + to.hashCode();
    }

    @Override
    public String toString() {
        return from + " -> " + to;
    }
}
