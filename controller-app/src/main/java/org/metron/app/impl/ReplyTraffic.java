package org.metron.app.impl;


import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.metron.synth.Deployment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Tag;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.TrafficClass;
import org.onosproject.net.ConnectPoint;

import java.io.IOException;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * What a compiled chain's reply ingress means for deployment (docs/contracts.md "Replies"): whether the chain
 * has one, and which of its egresses lead replies back toward the source. Replies enter at the chain's egress
 * point and leave at its ingress point, so a reply egress gets the reply marker and the reply return path.
 * The single place that tells reply classes and reply egresses from forward ones. Immutable.
 */
public final class ReplyTraffic {
    /**
     * How the synthesizer's {@link TrafficClass#operations()} starts for a reply class (its Compiler writes
     * it; the class type has no flag of its own).
     */
    static final String REPLY_OPERATIONS_PREFIX = "reply: ";
    static final ReplyTraffic NONE = new ReplyTraffic(false, Set.of(), Map.of());
    private static final ObjectMapper JSON = new ObjectMapper();

    private final boolean present;
    private final Set<Integer> egresses;
    /** Reply class → the forward classes whose flows its replies belong to (sorted). */
    private final Map<Integer, List<Integer>> answers;

    private ReplyTraffic(boolean present, Set<Integer> egresses, Map<Integer, List<Integer>> answers) {
        this.present = present;
        this.egresses = Set.copyOf(egresses);
        this.answers = Map.copyOf(answers);
    }

    /**
     * Reads a compiled chain.
     *
     * @throws MetronException (INVALID_CHAIN) when one egress carries both forward traffic and replies: the
     *                         controller could not tell which way to send it
     */
    public static ReplyTraffic of(CompiledChain c) {
        Set<Integer> reply = new TreeSet<>();
        Set<Integer> forward = new TreeSet<>();
        boolean present = !c.replyRules().isEmpty();
        for (TrafficClass tc : c.classes()) {
            boolean isReply = tc.operations().startsWith(REPLY_OPERATIONS_PREFIX);
            present |= isReply;
            if (!tc.drops()) {
                (isReply ? reply : forward).add(tc.egress());
            }
        }
        for (OffloadRule r : c.replyRules()) {
            if (r.action().type() == RuleAction.Type.TO_EGRESS) {
                reply.add(r.action().egress());
            }
        }
        for (OffloadRule r : c.offloadRules()) {
            if (r.action().type() == RuleAction.Type.TO_EGRESS) {
                forward.add(r.action().egress());
            }
        }
        if (!present) {
            return NONE;
        }
        for (int k : reply) {
            if (forward.contains(k)) {
                throw new MetronException(Fault.INVALID_CHAIN, "chain " + c.name() + ": egress " + k + " ("
                        + c.egress().get(k) + ") carries both forward traffic and replies; replies need an egress "
                        + "of their own (e.g. fw.out1) so they can be sent back toward the ingress point");
            }
        }
        if (c.classes().size() > Tag.REPLY_EGRESS_CLASS) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + c.name() + " has "
                    + c.classes().size() + " traffic classes; with a reply ingress class index "
                    + Tag.REPLY_EGRESS_CLASS + " is the reply egress marker (at most " + Tag.REPLY_EGRESS_CLASS
                    + " classes)");
        }
        return new ReplyTraffic(true, reply, answers(c));
    }

    /**
     * What each reply class answers, as the synthesizer computed it ({@link CompiledChain#replyAnswers()}); a
     * reply class it says nothing about (a compiled chain built by hand) is taken to answer every forward class
     * of its stateful operation, which is always safe.
     */
    private static Map<Integer, List<Integer>> answers(CompiledChain c) {
        Map<Integer, List<Integer>> out = new TreeMap<>();
        for (TrafficClass r : c.classes()) {
            if (!r.operations().startsWith(REPLY_OPERATIONS_PREFIX) || r.drops()) {
                continue;
            }
            List<Integer> known = c.replyAnswers().get(r.id());
            out.put(r.id(), known != null ? known : c.classes().stream()
                    .filter(f -> r.stateful() && !f.operations().startsWith(REPLY_OPERATIONS_PREFIX) && !f.drops()
                            && f.statefulKey().equals(r.statefulKey()))
                    .map(TrafficClass::id).collect(Collectors.toList()));
        }
        return out;
    }

    /**
     * The points where a chain's rules classify arriving traffic: its ingress point, and its egress point when
     * its chain JSON declares a reply ingress (a second {@code ingress} entry, docs/contracts.md). Read from the
     * stored JSON so that no chain has to be compiled to learn it.
     */
    static List<ConnectPoint> entryPoints(Deployment d, String chainJson) {
        JsonNode ingress;
        try {
            ingress = JSON.readTree(chainJson).path("ingress");
        } catch (IOException e) {
            throw new MetronException(Fault.INTERNAL, "stored chain JSON does not parse: " + e.getMessage());
        }
        return ingress.size() > 1 ? List.of(ingress(d), egress(d)) : List.of(ingress(d));
    }

    /** Whether the chain has a reply ingress. */
    public boolean present() {
        return present;
    }

    /**
     * The forward classes reply class {@code replyClass} answers (empty for a class that is no reply class or
     * needs no flow state).
     */
    public List<Integer> answers(int replyClass) {
        return answers.getOrDefault(replyClass, List.of());
    }

    /**
     * {@code classes} (one group's) in the units a split keeps together: a reply class with every forward class
     * it answers, joined when they share a class, since a reply must reach the core that holds its flow's
     * mapping; every other class on its own. Units are sorted, and ordered by their lowest class.
     */
    public List<List<Integer>> units(Collection<Integer> classes) {
        Map<Integer, Integer> parent = new HashMap<>();
        classes.forEach(k -> parent.put(k, k));
        for (int r : classes) {
            for (int f : answers(r)) {
                if (parent.containsKey(f)) {
                    parent.put(root(parent, f), root(parent, r));
                }
            }
        }
        Map<Integer, TreeSet<Integer>> byRoot = new HashMap<>();
        classes.forEach(k -> byRoot.computeIfAbsent(root(parent, k), x -> new TreeSet<>()).add(k));
        return byRoot.values().stream().map(List::copyOf).sorted(Comparator.comparing(u -> u.get(0)))
                .collect(Collectors.toList());
    }

    private static int root(Map<Integer, Integer> parent, int k) {
        while (parent.get(k) != k) {
            k = parent.get(k);
        }
        return k;
    }

    /** Whether egress {@code k} leads replies toward the chain's ingress point. */
    boolean isReplyEgress(int k) {
        return egresses.contains(k);
    }
}
