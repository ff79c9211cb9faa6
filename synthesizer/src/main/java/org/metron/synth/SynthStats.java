package org.metron.synth;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** Summary of one synthesis: sizes and time per phase. Immutable. */
public final class SynthStats {
    private final int classes;
    private final int entries;
    private final int rulesOffloaded;
    private final int rulesSoftware;
    private final Map<String, Long> phaseNanos;

    /**
     * Creates stats.
     *
     * @param classes        traffic classes
     * @param entries        header-space filter entries over all classes (first-match order)
     * @param rulesOffloaded offload rules emitted (after range expansion)
     * @param rulesSoftware  filter entries left to the software classifier
     * @param phaseNanos     time per phase in run order (parse, synthesize, split, compile)
     */
    public SynthStats(int classes, int entries, int rulesOffloaded, int rulesSoftware, Map<String, Long> phaseNanos) {
        this.classes = classes;
        this.entries = entries;
        this.rulesOffloaded = rulesOffloaded;
        this.rulesSoftware = rulesSoftware;
        this.phaseNanos = Collections.unmodifiableMap(new LinkedHashMap<>(phaseNanos));
    }

    public int classes() {
        return classes;
    }

    public int entries() {
        return entries;
    }

    public int rulesOffloaded() {
        return rulesOffloaded;
    }

    public int rulesSoftware() {
        return rulesSoftware;
    }

    /** Nanoseconds per phase, in run order. */
    public Map<String, Long> phaseNanos() {
        return phaseNanos;
    }

    /** Sum of all phases in nanoseconds. */
    public long totalNanos() {
        return phaseNanos.values().stream().mapToLong(Long::longValue).sum();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append(classes).append(" classes, ").append(entries).append(" entries, ")
                .append(rulesOffloaded).append(" rules offloaded, ").append(rulesSoftware).append(" in software;");
        phaseNanos.forEach((k, v) -> sb.append(' ').append(k).append(' ')
                .append(String.format("%.1f", v / 1e6)).append(" ms"));
        return sb.toString();
    }
}
