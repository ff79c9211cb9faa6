package org.metron.synth;

import java.util.Objects;
import java.util.Optional;

/**
 * One NF of a chain: its name and either its whole Click configuration, inline, or a black box
 * (docs/blackbox.md): a separate process the synthesizer cuts the chain at. Immutable.
 */
public final class NfSpec {
    private final String name;
    private final String click;
    private final BlackBoxSpec blackBox;

    private NfSpec(String name, String click, BlackBoxSpec blackBox) {
        this.name = Objects.requireNonNull(name, "name");
        this.click = click;
        this.blackBox = blackBox;
    }

    /** Creates a Click NF. */
    public static NfSpec of(String name, String click) {
        return new NfSpec(name, Objects.requireNonNull(click, "click"), null);
    }

    /** Creates a black-box NF. */
    public static NfSpec blackBox(String name, BlackBoxSpec blackBox) {
        return new NfSpec(name, null, Objects.requireNonNull(blackBox, "blackBox"));
    }

    public String name() {
        return name;
    }

    /** The NF's Click configuration text; empty for a black box (it has none). */
    public String click() {
        return click == null ? "" : click;
    }

    /** The black box this NF is, if it is one. */
    public Optional<BlackBoxSpec> blackBox() {
        return Optional.ofNullable(blackBox);
    }

    public boolean isBlackBox() {
        return blackBox != null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NfSpec && ((NfSpec) o).name.equals(name) && Objects.equals(((NfSpec) o).click, click)
                && Objects.equals(((NfSpec) o).blackBox, blackBox);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, click, blackBox);
    }

    @Override
    public String toString() {
        return name;
    }
}
