package org.metron.synth.click;

/** A connection {@code from [outPort] -> [inPort] to} with the position of its arrow. */
public final class Connection {
    private final ElementDecl from;
    private final int outPort;
    private final ElementDecl to;
    private final int inPort;
    private final int line;
    private final int column;

    public Connection(ElementDecl from, int outPort, ElementDecl to, int inPort, int line, int column) {
        this.from = from;
        this.outPort = outPort;
        this.to = to;
        this.inPort = inPort;
        this.line = line;
        this.column = column;
    }

    public ElementDecl from() {
        return from;
    }

    public int outPort() {
        return outPort;
    }

    public ElementDecl to() {
        return to;
    }

    public int inPort() {
        return inPort;
    }

    public int line() {
        return line;
    }

    public int column() {
        return column;
    }

    @Override
    public String toString() {
        return from.name() + "[" + outPort + "] -> [" + inPort + "]" + to.name();
    }
}
