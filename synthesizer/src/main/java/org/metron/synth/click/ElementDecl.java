package org.metron.synth.click;

import java.util.List;

/** An element of a flattened Click configuration: name, class, arguments and its source position. */
public final class ElementDecl {
    private final String name;
    private final String className;
    private final List<Arg> args;
    private final int line;
    private final int column;
    private final boolean anonymous;

    public ElementDecl(String name, String className, List<Arg> args, int line, int column, boolean anonymous) {
        this.name = name;
        this.className = className;
        this.args = List.copyOf(args);
        this.line = line;
        this.column = column;
        this.anonymous = anonymous;
    }

    /** Element name; anonymous elements are named {@code Class@N} (see tests/click-vectors/README.md). */
    public String name() {
        return name;
    }

    public String className() {
        return className;
    }

    public List<Arg> args() {
        return args;
    }

    /** Line where the element is declared (for anonymous ones: where its class name appears). */
    public int line() {
        return line;
    }

    public int column() {
        return column;
    }

    public boolean anonymous() {
        return anonymous;
    }

    @Override
    public String toString() {
        return name + " :: " + className;
    }
}
