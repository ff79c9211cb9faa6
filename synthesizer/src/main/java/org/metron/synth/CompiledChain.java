package org.metron.synth;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The synthesizer's output for one chain and one target: traffic classes, their groups with the agent's Click
 * configs, and the offload rules. Immutable.
 */
public final class CompiledChain {
    private final String name;
    private final TargetProfile target;
    private final List<TrafficClass> classes;
    private final List<ClassGroup> groups;
    private final List<OffloadRule> offloadRules;
    private final List<OffloadRule> replyRules;
    private final List<String> egress;
    private final SynthStats stats;
    private final Map<Integer, List<Integer>> replyAnswers;

    /**
     * Creates the result.
     *
     * @param name         chain name
     * @param target       profile the rules were compiled for
     * @param classes      traffic classes, index = class id
     * @param groups       class groups
     * @param offloadRules offload rules, highest priority first
     * @param egress       egress interface names ({@code nf.iface}), index = {@code [k]output}
     * @param stats        sizes and timings
     */
    public CompiledChain(String name, TargetProfile target, List<TrafficClass> classes, List<ClassGroup> groups,
                         List<OffloadRule> offloadRules, List<String> egress, SynthStats stats) {
        this(name, target, classes, groups, offloadRules, List.of(), egress, stats);
    }

    /**
     * Creates the result of a chain with a reply ingress.
     *
     * @param replyRules offload rules for reply traffic at the reply ingress, highest priority first
     */
    public CompiledChain(String name, TargetProfile target, List<TrafficClass> classes, List<ClassGroup> groups,
                         List<OffloadRule> offloadRules, List<OffloadRule> replyRules, List<String> egress,
                         SynthStats stats) {
        this(name, target, classes, groups, offloadRules, replyRules, egress, stats, Map.of());
    }

    /**
     * Creates the result of a chain with a reply ingress, with what its reply classes answer.
     *
     * @param replyAnswers reply class id → the forward classes whose flows its replies may belong to
     *                     ({@link #replyAnswers()})
     */
    public CompiledChain(String name, TargetProfile target, List<TrafficClass> classes, List<ClassGroup> groups,
                         List<OffloadRule> offloadRules, List<OffloadRule> replyRules, List<String> egress,
                         SynthStats stats, Map<Integer, List<Integer>> replyAnswers) {
        Map<Integer, List<Integer>> answers = new TreeMap<>();
        replyAnswers.forEach((k, v) -> answers.put(k, List.copyOf(v)));
        this.replyAnswers = Collections.unmodifiableMap(answers);
        this.replyRules = List.copyOf(replyRules);
        this.name = Objects.requireNonNull(name, "name");
        this.target = Objects.requireNonNull(target, "target");
        this.classes = List.copyOf(classes);
        this.groups = List.copyOf(groups);
        this.offloadRules = List.copyOf(offloadRules);
        this.egress = List.copyOf(egress);
        this.stats = Objects.requireNonNull(stats, "stats");
    }

    public String name() {
        return name;
    }

    public TargetProfile target() {
        return target;
    }

    /** Traffic classes; index = class id. */
    public List<TrafficClass> classes() {
        return classes;
    }

    public List<ClassGroup> groups() {
        return groups;
    }

    /** Offload rules in priority order, highest first. */
    public List<OffloadRule> offloadRules() {
        return offloadRules;
    }

    /**
     * Offload rules for reply traffic, to be installed where replies enter (the chain's reply ingress, the
     * second {@code ingress} entry), in priority order; empty for a chain without one. Their TO_SERVER
     * actions name reply classes or {@link TrafficClass#REPLY_UNCLASSIFIED}.
     */
    public List<OffloadRule> replyRules() {
        return replyRules;
    }

    /**
     * For each reply class, the forward classes whose flows its replies may belong to: those with the same
     * stateful operation (so the same flow table) whose outgoing headers, reversed, overlap the reply class's
     * filter entries. An over-approximation; empty for a reply class that needs no flow state. A reply class
     * missing here (a result built by hand) is not known to answer only some classes. Scaling keeps a reply
     * class on the core of every forward class it answers (docs/scaling.md#replies).
     */
    public Map<Integer, List<Integer>> replyAnswers() {
        return replyAnswers;
    }

    /** Egress interface names ({@code nf.iface}); index = {@code [k]output} of group configs. */
    public List<String> egress() {
        return egress;
    }

    public SynthStats stats() {
        return stats;
    }

    @Override
    public String toString() {
        return "chain " + name + " for " + target + ": " + stats;
    }
}
