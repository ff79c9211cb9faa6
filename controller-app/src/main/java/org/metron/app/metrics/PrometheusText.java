package org.metron.app.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Builds a Prometheus text exposition (format version 0.0.4): each family once, its HELP and TYPE lines first and
 * its samples together, counters named {@code *_total}, label values escaped. Families are written in the order
 * they are first declared. Not thread-safe: one per scrape.
 */
public final class PrometheusText {
    /** The Content-Type of the format. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /** Metric types this writer emits. */
    public enum Type { COUNTER, GAUGE }

    private static final class Family {
        final Type type;
        final String help;
        final List<String> samples = new ArrayList<>();

        Family(Type type, String help) {
            this.type = type;
            this.help = help;
        }
    }

    private final Map<String, Family> families = new LinkedHashMap<>();

    /**
     * Declares a family (again: must be the same type). A counter's name must end in {@code _total}.
     *
     * @throws IllegalArgumentException for an invalid name, a counter not named *_total, or a type change
     */
    public PrometheusText family(String name, Type type, String help) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid metric name '" + name + "'");
        }
        if (type == Type.COUNTER && !name.endsWith("_total")) {
            throw new IllegalArgumentException("counter '" + name + "' must be named *_total");
        }
        Family f = families.computeIfAbsent(name, n -> new Family(type, help));
        if (f.type != type) {
            throw new IllegalArgumentException("metric '" + name + "' declared as " + f.type + " and " + type);
        }
        return this;
    }

    /**
     * Adds a sample to a declared family.
     *
     * @param labels name, value, name, value...
     * @throws IllegalArgumentException for an undeclared family, an odd label list or an invalid label name
     */
    public PrometheusText sample(String name, double value, String... labels) {
        Family f = families.get(name);
        if (f == null) {
            throw new IllegalArgumentException("metric '" + name + "' not declared");
        }
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException("metric '" + name + "': labels come in name/value pairs");
        }
        StringBuilder b = new StringBuilder(name);
        for (int i = 0; i < labels.length; i += 2) {
            if (!LABEL.matcher(labels[i]).matches() || labels[i].startsWith("__")) {
                throw new IllegalArgumentException("metric '" + name + "': invalid label name '" + labels[i] + "'");
            }
            b.append(i == 0 ? '{' : ',').append(labels[i]).append("=\"")
                    .append(escapeLabelValue(Objects.requireNonNull(labels[i + 1]))).append('"');
        }
        if (labels.length > 0) {
            b.append('}');
        }
        f.samples.add(b.append(' ').append(format(value)).toString());
        return this;
    }

    /** The exposition; families declared without samples are left out. */
    public String text() {
        StringBuilder b = new StringBuilder();
        families.forEach((name, f) -> {
            if (f.samples.isEmpty()) {
                return;
            }
            b.append("# HELP ").append(name).append(' ').append(escapeHelp(f.help)).append('\n');
            b.append("# TYPE ").append(name).append(' ').append(f.type.name().toLowerCase()).append('\n');
            f.samples.forEach(s -> b.append(s).append('\n'));
        });
        return b.toString();
    }

    /** Backslash, double quote and line feed escaped, as the format requires of label values. */
    public static String escapeLabelValue(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** Backslash and line feed escaped, as the format requires of HELP text. */
    static String escapeHelp(String v) {
        return v.replace("\\", "\\\\").replace("\n", "\\n");
    }

    /** Integers without a fraction (counters read as such), NaN and infinities as the format spells them. */
    static String format(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Double.toString(v);
    }
}
