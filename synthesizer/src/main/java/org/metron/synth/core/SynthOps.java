package org.metron.synth.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The one definition of how a class's stateful steps collapse into a single {@code SynthRewriter}: rewrite
 * pools are multiplied (later steps override earlier fields; the first step's choice varies fastest, which
 * is how {@link Run#choose} splits one choice into per-element digits), DPI signatures are concatenated.
 * Reply steps (rewriters' reply inputs, met in reverse chain order) undo the composition of their pools in
 * forward order: one lookup in input 1 of the SynthRewriter that made the forward mapping.
 */
public final class SynthOps {
    private SynthOps() {
    }

    /** The composed pattern pool of the rewrite steps, or an empty list if there are none. */
    public static List<RewritePattern> pool(List<StatefulStep> steps) {
        return compose(beforeBox(steps), StatefulStep.Kind.REWRITE);
    }

    /**
     * The steps before the first black box (all of them without one): what one group config runs before it hands
     * packets to the box; what comes after is classified again and collapsed on its own.
     */
    public static List<StatefulStep> beforeBox(List<StatefulStep> steps) {
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).kind == StatefulStep.Kind.BLACKBOX) {
                return steps.subList(0, i);
            }
        }
        return steps;
    }

    /** The forward pool whose mappings reply steps undo (their pools composed in forward order). */
    public static List<RewritePattern> replyPool(List<StatefulStep> steps) {
        List<StatefulStep> forward = new ArrayList<>(steps);
        java.util.Collections.reverse(forward);
        return compose(forward, StatefulStep.Kind.REPLY);
    }

    /** True if the steps include a rewriter's reply input. */
    public static boolean isReply(List<StatefulStep> steps) {
        return steps.stream().anyMatch(s -> s.kind == StatefulStep.Kind.REPLY);
    }

    /**
     * The rewriter a class's flows are kept in, as {@code SynthRewriter(...)} text: for forward steps their
     * composed pool, for reply steps the pool they undo. Empty if there is no rewrite. A reply class is
     * answered by the SynthRewriter of the forward classes with the same text.
     */
    public static String rewriter(List<StatefulStep> steps) {
        List<RewritePattern> pool = isReply(steps) ? replyPool(steps) : pool(steps);
        return pool.isEmpty() ? "" : "SynthRewriter(" + rewriterArgs(pool, select(steps), capacity(steps), timeouts(steps))
                + ")";
    }

    /**
     * Flows per core the collapsed rewriter may hold: the smallest capacity its rewriters declare (a flow needs a
     * mapping in each of them), 0 if none declares one (the agent's table then grows, as Click's holds every
     * flow). Each group's SynthRewriter reserves it on its core.
     */
    public static long capacity(List<StatefulStep> steps) {
        long cap = 0;
        for (StatefulStep s : beforeBox(steps)) {
            if ((s.kind == StatefulStep.Kind.REWRITE || s.kind == StatefulStep.Kind.REPLY) && s.capacity > 0) {
                cap = cap == 0 ? s.capacity : Math.min(cap, s.capacity);
            }
        }
        return cap;
    }

    /**
     * Idle timeouts of the collapsed rewriter: per flow state the shortest of its rewriters' (Click's defaults
     * where a rewriter declares none). Click drops each rewriter's mapping on its own timeout, and a flow whose
     * mapping is gone in one of them is a new flow there (possibly a new port or backend); one entry holding all
     * the mappings must therefore expire when the first of them would (docs/contracts.md).
     */
    public static IdleTimeouts timeouts(List<StatefulStep> steps) {
        IdleTimeouts t = null;
        for (StatefulStep s : beforeBox(steps)) {
            if (s.kind == StatefulStep.Kind.REWRITE || s.kind == StatefulStep.Kind.REPLY) {
                t = t == null ? s.timeouts : t.shortest(s.timeouts);
            }
        }
        return t == null ? IdleTimeouts.CLICK_DEFAULTS : t;
    }

    private static List<RewritePattern> compose(List<StatefulStep> steps, StatefulStep.Kind kind) {
        List<RewritePattern> acc = null;
        for (StatefulStep s : steps) {
            if (s.kind != kind) {
                continue;
            }
            if (acc == null) {
                acc = new ArrayList<>(s.pool);
                continue;
            }
            List<RewritePattern> next = new ArrayList<>(acc.size() * s.pool.size());
            for (RewritePattern later : s.pool) {
                for (RewritePattern earlier : acc) {
                    next.add(earlier.then(later));
                }
            }
            acc = next;
        }
        return acc == null ? List.of() : acc;
    }

    /** Pool selection policy of the steps; "roundrobin" unless a pool says otherwise. */
    public static String select(List<StatefulStep> steps) {
        String sel = "roundrobin";
        for (StatefulStep s : beforeBox(steps)) {
            if (s.kind != StatefulStep.Kind.DPI && s.kind != StatefulStep.Kind.SPIN && s.pool.size() > 1) {
                sel = s.select;
            }
        }
        return sel;
    }

    /**
     * SynthRewriter arguments for a pool: {@code PATTERN s sp d dp, ..., SELECT sel[, CAPACITY n], TCP_TIMEOUT t,
     * ...}: every state's timeout is written, so the deployed element keeps flows as the chain's rewriters would.
     */
    public static String rewriterArgs(List<RewritePattern> pool, String select, long capacity, IdleTimeouts timeouts) {
        StringBuilder sb = new StringBuilder();
        for (RewritePattern p : pool) {
            sb.append(sb.length() > 0 ? ", " : "").append("PATTERN ").append(p);
        }
        if (pool.size() > 1) {
            sb.append(", SELECT ").append(select);
        }
        if (capacity > 0) {
            sb.append(", CAPACITY ").append(capacity);
        }
        return sb.append(", ").append(timeouts.keywords()).toString();
    }

    /** All DPI signatures of the steps, in order. */
    public static List<String> signatures(List<StatefulStep> steps) {
        List<String> out = new ArrayList<>();
        for (StatefulStep s : beforeBox(steps)) {
            if (s.kind == StatefulStep.Kind.DPI) {
                out.addAll(s.signatures);
            }
        }
        return out;
    }

    /** Cycles per packet of all SpinCycles steps (0 = none). */
    public static long spinCycles(List<StatefulStep> steps) {
        return beforeBox(steps).stream().filter(s -> s.kind == StatefulStep.Kind.SPIN).mapToLong(s -> s.cycles).sum();
    }

    /**
     * Canonical text of what the steps do as one stateful operation; equal texts = same operation. Used as
     * the class's stateful key and compared by the equivalence checker.
     */
    public static String canonical(List<StatefulStep> steps) {
        if (steps.isEmpty()) {
            return "";
        }
        // the checker asks this for every packet; chains have few distinct operations
        String known = CANONICAL.get(steps);
        if (known != null) {
            return known;
        }
        String c = canonicalText(steps);
        if (CANONICAL.size() > 65536) {
            CANONICAL.clear();
        }
        CANONICAL.put(List.copyOf(steps), c);
        return c;
    }

    private static final java.util.Map<List<StatefulStep>, String> CANONICAL =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static String canonicalText(List<StatefulStep> steps) {
        // a black box cuts the operation: what comes before it and what after are collapsed on their own (the
        // agent runs a rewriter before it and another after it), the box itself named between them
        for (int i = 0; i < steps.size(); i++) {
            StatefulStep b = steps.get(i);
            if (b.kind == StatefulStep.Kind.BLACKBOX) {
                String before = canonicalText(steps.subList(0, i));
                String after = canonicalText(steps.subList(i + 1, steps.size()));
                return (before.isEmpty() ? "" : before + " ") + "BlackBox(" + String.join(": ", b.signatures) + ")"
                        + (after.isEmpty() ? "" : " " + after);
            }
        }
        if (steps.isEmpty()) {
            return "";
        }
        if (isReply(steps)) {
            return "reply " + rewriter(steps);
        }
        StringBuilder sb = new StringBuilder();
        if (spinCycles(steps) > 0) {
            sb.append("SpinCycles(CYCLES ").append(spinCycles(steps)).append(")");
        }
        List<String> sigs = signatures(steps);
        if (!sigs.isEmpty()) {
            sb.append(sb.length() > 0 ? " " : "").append("DPI(").append(String.join(", ", sigs)).append(")");
        }
        String rw = rewriter(steps);
        if (!rw.isEmpty()) {
            sb.append(sb.length() > 0 ? " " : "").append(rw);
        }
        return sb.toString();
    }
}
