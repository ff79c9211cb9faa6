package org.metron.synth;

import java.util.Objects;

/** One NF of a chain: its name and its whole Click configuration, inline. Immutable. */
public final class NfSpec {
    private final String name;
    private final String click;

    private NfSpec(String name, String click) {
        this.name = Objects.requireNonNull(name, "name");
        this.click = Objects.requireNonNull(click, "click");
    }

    /** Creates an NF. */
    public static NfSpec of(String name, String click) {
        return new NfSpec(name, click);
    }

    public String name() {
        return name;
    }

    /** The NF's Click configuration text. */
    public String click() {
        return click;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NfSpec && ((NfSpec) o).name.equals(name) && ((NfSpec) o).click.equals(click);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, click);
    }

    @Override
    public String toString() {
        return name;
    }
}
