package org.metron.synth;

import java.util.Objects;

/**
 * A stateless header write: set {@code field} to {@code value}. The value is text in the field's usual
 * notation ({@code 10.0.0.1}, {@code 2001:db8::1}, {@code 02:00:00:00:00:01}, {@code 8080}, {@code 0x10}).
 * Immutable.
 */
public final class HeaderWrite {
    private final MatchField field;
    private final String value;

    private HeaderWrite(MatchField field, String value) {
        this.field = Objects.requireNonNull(field, "field");
        this.value = Objects.requireNonNull(value, "value");
    }

    /** Creates a write. */
    public static HeaderWrite of(MatchField field, String value) {
        return new HeaderWrite(field, value);
    }

    public MatchField field() {
        return field;
    }

    public String value() {
        return value;
    }

    @Override
    public String toString() {
        return field + "=" + value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HeaderWrite && ((HeaderWrite) o).field == field && ((HeaderWrite) o).value.equals(value);
    }

    @Override
    public int hashCode() {
        return field.hashCode() * 31 + value.hashCode();
    }
}
