package org.metron.synth.click;

/** One configuration argument of an element (text between top-level commas), with where it starts. */
public final class Arg {
    private final String text;
    private final int line;
    private final int column;

    public Arg(String text, int line, int column) {
        this.text = text;
        this.line = line;
        this.column = column;
    }

    /** Trimmed text, comments removed, whitespace runs kept as written. */
    public String text() {
        return text;
    }

    public int line() {
        return line;
    }

    public int column() {
        return column;
    }

    /** Text with every whitespace run collapsed to one space (the form test vectors print). */
    public String normalized() {
        return text.trim().replaceAll("\\s+", " ");
    }

    @Override
    public String toString() {
        return text;
    }
}
