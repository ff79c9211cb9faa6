package org.metron.synth.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The one definition of how a class's stateful steps collapse into a single {@code SynthRewriter}: rewrite
 * pools are multiplied (later steps override earlier fields; the first step's choice varies fastest, which
 * is how {@link Run#choose} splits one choice into per-element digits), DPI signatures are concatenated.
 */
public final class SynthOps {
    private SynthOps() {
    }

    /** The composed pattern pool of the rewrite steps, or an empty list if there are none. */
    public static List<RewritePattern> pool(List<StatefulStep> steps) {
        List<RewritePattern> acc = null;
        for (StatefulStep s : steps) {
            if (s.kind != StatefulStep.Kind.REWRITE) {
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
        for (StatefulStep s : steps) {
            if (s.kind == StatefulStep.Kind.REWRITE && s.pool.size() > 1) {
                sel = s.select;
            }
        }
        return sel;
    }

    /** SynthRewriter arguments for a pool: {@code PATTERN s sp d dp, ..., SELECT sel}. */
    public static String rewriterArgs(List<RewritePattern> pool, String select) {
        StringBuilder sb = new StringBuilder();
        for (RewritePattern p : pool) {
            sb.append(sb.length() > 0 ? ", " : "").append("PATTERN ").append(p);
        }
        if (pool.size() > 1) {
            sb.append(", SELECT ").append(select);
        }
        return sb.toString();
    }

    /** All DPI signatures of the steps, in order. */
    public static List<String> signatures(List<StatefulStep> steps) {
        List<String> out = new ArrayList<>();
        for (StatefulStep s : steps) {
            if (s.kind == StatefulStep.Kind.DPI) {
                out.addAll(s.signatures);
            }
        }
        return out;
    }

    /** Cycles per packet of all SpinCycles steps (0 = none). */
    public static long spinCycles(List<StatefulStep> steps) {
        return steps.stream().filter(s -> s.kind == StatefulStep.Kind.SPIN).mapToLong(s -> s.cycles).sum();
    }

    /**
     * Canonical text of what the steps do as one stateful operation; equal texts = same operation. Used as
     * the class's stateful key and compared by the equivalence checker.
     */
    public static String canonical(List<StatefulStep> steps) {
        if (steps.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        if (spinCycles(steps) > 0) {
            sb.append("SpinCycles(CYCLES ").append(spinCycles(steps)).append(")");
        }
        List<String> sigs = signatures(steps);
        if (!sigs.isEmpty()) {
            sb.append(sb.length() > 0 ? " " : "").append("DPI(").append(String.join(", ", sigs)).append(")");
        }
        List<RewritePattern> pool = pool(steps);
        if (!pool.isEmpty()) {
            sb.append(sb.length() > 0 ? " " : "").append("SynthRewriter(").append(rewriterArgs(pool, select(steps)))
                    .append(")");
        }
        return sb.toString();
    }
}
