package org.metron.synth.elements;

import org.metron.synth.SynthesisException;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.filter.Expr;
import org.metron.synth.filter.PatternParser;
import org.metron.synth.filter.RuleIndex;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;

/**
 * IPFilter(ACTION PATTERN, ...) and IPClassifier(PATTERN, ...): the first matching rule decides; packets
 * matching no rule are dropped. IPFilter actions: allow (output 0), deny/drop (dropped), N (output N).
 * IPClassifier: rule i goes to output i. Pattern syntax: {@link PatternParser}.
 */
public final class IpClassifier extends Element {
    private final Expr[] exprs;
    private final int[] outs;
    private final List<List<Cube>> dnfs = new ArrayList<>();
    private final int outputs;
    private RuleIndex index;
    /** Reference lookup: one index entry per top-level alternative of each rule, in rule order. */
    private Expr[] alts;
    private int[] altRule;

    IpClassifier(String nf, ElementDecl decl) {
        super(nf, decl);
        boolean filter = decl.className().equals("IPFilter");
        List<Arg> args = decl.args();
        if (args.isEmpty()) {
            throw error(decl.className() + " needs at least one rule");
        }
        exprs = new Expr[args.size()];
        outs = new int[args.size()];
        int max = filter ? 0 : args.size() - 1;
        for (int r = 0; r < args.size(); r++) {
            Arg a = args.get(r);
            String t = a.text();
            int patStart = 0;
            if (filter) {
                int sp = 0;
                while (sp < t.length() && !Character.isWhitespace(t.charAt(sp))) {
                    sp++;
                }
                String action = t.substring(0, sp);
                if (action.equals("allow")) {
                    outs[r] = 0;
                } else if (action.equals("deny") || action.equals("drop")) {
                    outs[r] = Out.DROP;
                } else if (action.matches("\\d{1,4}")) {
                    outs[r] = Integer.parseInt(action);
                    max = Math.max(max, outs[r]);
                } else {
                    throw error(a, "IPFilter rule must start with allow, deny, drop or an output number, found '"
                            + action + "'");
                }
                patStart = sp;
                while (patStart < t.length() && Character.isWhitespace(t.charAt(patStart))) {
                    patStart++;
                }
                if (patStart >= t.length()) {
                    throw error(a, "IPFilter rule '" + t + "' has no pattern (use 'all' to match everything)");
                }
            } else {
                outs[r] = r;
            }
            int[] lc = position(a, patStart);
            try {
                exprs[r] = PatternParser.parse(t.substring(patStart), lc[0], lc[1]);
                dnfs.add(exprs[r].dnf());
            } catch (SynthesisException e) {
                throw new SynthesisException(nf, decl.name(), e.line() > 0 ? e.line() : a.line(),
                        e.line() > 0 ? e.column() : a.column(), e.reason());
            }
        }
        outputs = max + 1;
    }

    private static int[] position(Arg a, int offset) {
        int line = a.line();
        int col = a.column();
        for (int i = 0; i < offset; i++) {
            if (a.text().charAt(i) == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return new int[] {line, col};
    }

    /** Each rule's pattern as cubes (DNF), in rule order. */
    public List<List<Cube>> ruleCubes() {
        return java.util.Collections.unmodifiableList(dnfs);
    }

    /** Number of rules. */
    public int rules() {
        return exprs.length;
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return outputs;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        if (index == null) {
            buildIndex();
        }
        long[] cand = index.scratch();
        index.candidates(p.v, cand);
        for (int k = RuleIndex.next(cand, 0); k >= 0; k = RuleIndex.next(cand, k + 1)) {
            int r = altRule[k];
            if (alts[k].eval(p.v)) {
                if (run.trace != null) {
                    run.trace(id() + " rule " + r);
                }
                if (outs[r] == Out.DROP) {
                    if (run.trace != null) {
                        run.droppedBy = id() + " rule " + r;
                    }
                }
                return outs[r];
            }
        }
        if (run.trace != null) {
            run.droppedBy = id() + " (no rule matched)";
        }
        return Out.DROP;
    }

    private synchronized void buildIndex() {
        if (index != null) {
            return;
        }
        List<long[][]> sets = new ArrayList<>();
        List<Expr> as = new ArrayList<>();
        List<Integer> ar = new ArrayList<>();
        for (int r = 0; r < exprs.length; r++) {
            for (Expr e : exprs[r].alternatives()) {
                long[][] s = new long[Field.COUNT][];
                for (Field f : Field.values()) {
                    s[f.ordinal()] = e.bounds(f);
                }
                sets.add(s);
                as.add(e);
                ar.add(r);
            }
        }
        alts = as.toArray(new Expr[0]);
        altRule = ar.stream().mapToInt(Integer::intValue).toArray();
        index = new RuleIndex(sets);
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        requireIp(s);
        for (int r = 0; r < exprs.length; r++) {
            for (Cube c : dnfs.get(r)) {
                SymState t = restrict(s, c);
                if (t == null) {
                    continue;
                }
                out.emit(outs[r], outs[r] == Out.DROP ? t : t);
                if (t == s) {
                    return;
                }
            }
        }
        out.emit(Out.DROP, s);
    }
}
