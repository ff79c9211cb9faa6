package org.metron.synth.click;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed, flattened Click configuration: compound elements expanded ({@code inst/inner} names), variables
 * substituted, connections resolved to plain elements. Immutable.
 */
public final class ClickConfig {
    private final Map<String, ElementDecl> elements;
    private final List<Connection> connections;

    ClickConfig(List<ElementDecl> elements, List<Connection> connections) {
        Map<String, ElementDecl> m = new LinkedHashMap<>();
        elements.forEach(e -> m.put(e.name(), e));
        this.elements = java.util.Collections.unmodifiableMap(m);
        Map<String, Integer> index = new LinkedHashMap<>();
        for (ElementDecl e : elements) {
            index.put(e.name(), index.size());
        }
        List<Connection> sorted = new ArrayList<>(connections);
        sorted.sort(Comparator.<Connection>comparingInt(c -> index.get(c.from().name()))
                .thenComparingInt(Connection::outPort)
                .thenComparingInt(c -> index.get(c.to().name()))
                .thenComparingInt(Connection::inPort));
        List<Connection> dedup = new ArrayList<>();
        for (Connection c : sorted) {
            Connection last = dedup.isEmpty() ? null : dedup.get(dedup.size() - 1);
            if (last == null || last.from() != c.from() || last.outPort() != c.outPort() || last.to() != c.to()
                    || last.inPort() != c.inPort()) {
                dedup.add(c);
            }
        }
        this.connections = List.copyOf(dedup);
    }

    /** Elements by name, in creation order. */
    public Map<String, ElementDecl> elements() {
        return elements;
    }

    /** Connections sorted by (from element order, out port, to element order, in port), duplicates removed. */
    public List<Connection> connections() {
        return connections;
    }

    /** The line-based parse summary that tests/click-vectors/*.expect files hold. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        for (ElementDecl e : elements.values()) {
            sb.append("element ").append(e.name()).append(' ').append(e.className());
            if (!e.args().isEmpty()) {
                sb.append(' ');
                for (int i = 0; i < e.args().size(); i++) {
                    sb.append(i > 0 ? ", " : "").append(e.args().get(i).normalized());
                }
            }
            sb.append('\n');
        }
        for (Connection c : connections) {
            sb.append("connect ").append(c.from().name()).append(" [").append(c.outPort()).append("] -> [")
                    .append(c.inPort()).append("] ").append(c.to().name()).append('\n');
        }
        return sb.toString();
    }
}
