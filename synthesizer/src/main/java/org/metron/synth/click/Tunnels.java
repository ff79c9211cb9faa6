package org.metron.synth.click;

import java.util.ArrayList;
import java.util.List;

/**
 * A compound instance's {@code input} and {@code output}: placeholder elements while its body is read,
 * bypassed once the whole file is, so the flattened configuration connects the elements on both sides directly.
 */
final class Tunnels {
    private static final String TUNNEL = "<tunnel>";

    private Tunnels() {
    }

    /** A tunnel element named {@code name}, at the instance's position. */
    static ElementDecl tunnel(String name, int line, int column) {
        return new ElementDecl(name, TUNNEL, List.of(), line, column, false);
    }

    /** Replaces every tunnel by direct connections from its predecessors to its successors, port by port. */
    static void eliminate(List<ElementDecl> elements, List<Connection> connections) {
        List<ElementDecl> tunnels = new ArrayList<>();
        for (ElementDecl e : elements) {
            if (e.className().equals(TUNNEL)) {
                tunnels.add(e);
            }
        }
        List<Connection> conns = new ArrayList<>(connections);
        for (ElementDecl t : tunnels) {
            List<Connection> ins = new ArrayList<>();
            List<Connection> outs = new ArrayList<>();
            List<Connection> rest = new ArrayList<>();
            for (Connection c : conns) {
                if (c.to() == t && c.from() == t) {
                    continue;
                }
                if (c.to() == t) {
                    ins.add(c);
                } else if (c.from() == t) {
                    outs.add(c);
                } else {
                    rest.add(c);
                }
            }
            for (Connection a : ins) {
                for (Connection b : outs) {
                    if (a.inPort() == b.outPort()) {
                        rest.add(new Connection(a.from(), a.outPort(), b.to(), b.inPort(), a.line(), a.column()));
                    }
                }
            }
            conns = rest;
        }
        connections.clear();
        connections.addAll(conns);
        elements.removeIf(e -> e.className().equals(TUNNEL));
    }
}
