package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.IdleTimeouts;
import org.metron.synth.core.Out;
import org.metron.synth.core.RewritePattern;
import org.metron.synth.core.Run;
import org.metron.synth.core.StatefulStep;
import org.metron.synth.core.SymState;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * SynthRewriter (docs/contracts.md), as the synthesized-side evaluator runs it from an emitted group config:
 * a new flow at input 0 picks one pattern of the pool and is rewritten (its mapping recorded in the run's flow
 * state); a reply at input 1 that hits a mapping is restored and leaves at output 1, others are dropped (see
 * {@link Rewriter}, {@link PatternRewrites}). Never appears in operator NFs' synthesis: it has no symbolic
 * semantics.
 */
public final class SynthRewriterElement extends Element {
    private final List<RewritePattern> pool = new ArrayList<>();
    private final String select;
    private final StatefulStep forwardStep;
    private final StatefulStep replyStep;
    /** The agent's SynthRewriter: Click's IPRewriter timeout keywords and defaults (docs/contracts.md). */
    private final IdleTimeouts timeouts;

    SynthRewriterElement(String nf, ElementDecl decl) {
        super(nf, decl);
        String sel = "roundrobin";
        long capacity = 0;
        Map<String, Arg> timeoutArgs = new HashMap<>();
        for (Arg a : decl.args()) {
            String[] w = Args.words(a);
            switch (w[0]) {
                case "PATTERN":
                    if (w.length != 5) {
                        throw error(a, "expected 'PATTERN SADDR SPORT DADDR DPORT'");
                    }
                    try {
                        pool.add(RewritePattern.parse(w[1], w[2], w[3], w[4]));
                    } catch (IllegalArgumentException e) {
                        throw error(a, e.getMessage());
                    }
                    break;
                case "SELECT":
                    if (w.length != 2 || !Set.of("roundrobin", "maglev").contains(w[1])) {
                        throw error(a, "expected 'SELECT roundrobin|maglev'");
                    }
                    sel = w[1];
                    break;
                case "TIMEOUT": case "TCP_TIMEOUT": case "TCP_NODATA_TIMEOUT": case "TCP_DONE_TIMEOUT":
                case "UDP_TIMEOUT": case "UDP_STREAMING_TIMEOUT":
                    timeoutArgs.put(w[0], new Arg(a.text().trim().substring(w[0].length()).trim(), a.line(),
                            a.column()));
                    break;
                case "GUARANTEE":
                    break;
                case "CAPACITY":  // the declared capacity of the rewriters it collapses: part of its operation
                    try {
                        capacity = Long.parseLong(w.length == 2 ? w[1] : "");
                    } catch (NumberFormatException e) {
                        throw error(a, "expected 'CAPACITY flows'");
                    }
                    break;
                default:
                    throw error(a, "unknown SynthRewriter argument '" + w[0] + "'");
            }
        }
        if (pool.isEmpty()) {
            throw error("SynthRewriter needs at least one PATTERN");
        }
        select = sel;
        timeouts = idleTimeouts(timeoutArgs::get);
        forwardStep = StatefulStep.rewrite(id(), pool, select, capacity, timeouts);
        replyStep = StatefulStep.reply(id(), pool, select, capacity, timeouts);
    }

    @Override
    public double shortestIdleTimeout() {
        return timeouts.shortest();
    }

    @Override
    public int inputs() {
        return 2;
    }

    @Override
    public int outputs() {
        return 2;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        RewritePattern first = pool.get(0);
        int fam = first.family();
        boolean tcpUdp = (p.get(Field.IP_PROTO) == 6 || p.get(Field.IP_PROTO) == 17) && p.get(Field.IP_OFFSET) == 0;
        if (fam != 0 && (fam == 6) != p.isIp6() || first.touchesPorts() && !tcpUdp) {
            if (run.trace != null) {
                run.droppedBy = id() + " (packet not handled)";
            }
            return Out.DROP;
        }
        if (in != 0) {
            FlowState.Mapping m = run.state == null ? null : run.state.lookup(id(), p);
            if (m == null) {
                if (run.trace != null) {
                    run.droppedBy = id() + " (reply without mapping)";
                }
                return Out.DROP;
            }
            FlowState.restore(p, m);
            run.steps.add(replyStep);
            return 1;
        }
        int c = run.choose(pool.size());
        long[] orig = run.state == null ? null : FlowState.tuple(p);
        PatternRewrites.apply(pool.get(c), p, run);
        if (orig != null) {
            run.state.record(id(), orig, FlowState.tuple(p), 0, 1);
        }
        run.steps.add(forwardStep);
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        throw error("SynthRewriter is the synthesizer's output element; it cannot be synthesized again");
    }
}
