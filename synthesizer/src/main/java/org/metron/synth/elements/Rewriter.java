package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ClickConfig;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.IdleTimeouts;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.StatefulStep;
import org.metron.synth.core.SymState;
import org.metron.synth.filter.Expr;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * IPRewriter / TCPRewriter / UDPRewriter / IPAddrRewriter with Click input specs, one per input:
 * {@code pattern SADDR SPORT DADDR DPORT FOUT ROUT}, {@code pattern NAME FOUT ROUT} (IPRewriterPatterns),
 * {@code MAPPER} (a RoundRobinIPMapper element: a pool, one pattern per new flow), {@code keep FOUT ROUT},
 * {@code pass OUT} / {@code nochange OUT}, {@code drop} / {@code discard} (read by {@link RewriterSpec}; what
 * the patterns do to packets and states is {@link PatternRewrites}).
 * <p>
 * Forward traffic: every packet is the first of a new flow (a mapping is created; the checker runs each
 * forward packet on fresh state). Packets the element does not handle (not TCP/UDP or a non-first fragment for
 * the port rewriters, other IP family than the pattern's) are passed by {@code pass} inputs and dropped
 * otherwise. Traffic reaching a {@code drop} input is reply traffic: a packet whose tuple is the reverse of a
 * mapping's rewritten tuple is restored to the reverse of the flow's original tuple and leaves at that input
 * spec's ROUTPUT; anything else is dropped. Symbolically a reply input splits its state into the reply shapes
 * of the forward specs (the tuples their patterns can produce, reversed) and the rest (dropped: no mapping
 * can match it); which mapping, if any, a packet of a reply shape hits is flow state, decided in software by
 * the SynthRewriter's input 1. Replies match reverse mappings only (not Click's forward lookup on every input).
 */
public final class Rewriter extends Element {
    private static final Set<String> KEYWORDS = Set.of("TIMEOUT", "TCP_TIMEOUT", "TCP_DONE_TIMEOUT",
            "TCP_NODATA_TIMEOUT", "UDP_TIMEOUT", "UDP_STREAMING_TIMEOUT", "GUARANTEE", "REAP_INTERVAL",
            "REAP_TIME", "REAP_TCP", "MAPPING_CAPACITY", "CAPACITY", "DST_ANNO", "SET_DST_ANNO", "HANDLE_ICMP");

    private final List<RewriterSpec> specs = new ArrayList<>();
    /** Per input spec: its forward step and the reply step undoing it (made once: the checker runs millions). */
    private final List<StatefulStep> forwardSteps = new ArrayList<>();
    private final List<StatefulStep> replySteps = new ArrayList<>();
    private final int outputs;
    private final int protoGuard;
    private final IdleTimeouts timeouts;

    Rewriter(String nf, ElementDecl decl, ClickConfig cfg) {
        super(nf, decl);
        String cls = decl.className();
        protoGuard = cls.equals("TCPRewriter") ? 6 : cls.equals("UDPRewriter") ? 17
                : cls.equals("IPAddrRewriter") ? 0 : -1;
        Args args = new Args(decl.args(), KEYWORDS);
        if (args.positional.isEmpty()) {
            throw error(cls + " needs at least one input spec");
        }
        int max = 0;
        for (Arg a : args.positional) {
            RewriterSpec s = RewriterSpec.parse(a, cfg, this, protoGuard == 0);
            specs.add(s);
            max = Math.max(max, Math.max(s.fout, s.rout));
        }
        outputs = max + 1;
        timeouts = idleTimeouts(args.keywords::get);
        long capacity = capacity(args, "CAPACITY", 0);
        capacity = capacity(args, "MAPPING_CAPACITY", capacity);  // read after CAPACITY, as in Click
        for (int i = 0; i < specs.size(); i++) {
            RewriterSpec sp = specs.get(i);
            forwardSteps.add(StatefulStep.rewrite(id() + "[" + i + "]", sp.pool, sp.select, capacity, timeouts));
            replySteps.add(StatefulStep.reply(id() + "[" + i + "]", sp.pool, sp.select, capacity, timeouts));
        }
    }

    @Override
    public double shortestIdleTimeout() {
        return timeouts.shortest();
    }

    /**
     * A declared mapping capacity (flows per core, as Click's per-thread heaps), carried into the group's
     * SynthRewriter; Click also takes another rewriter's name (a shared capacity), which per-core tables cannot do.
     */
    private long capacity(Args args, String keyword, long dflt) {
        Arg a = args.keywords.get(keyword);
        if (a == null) {
            return dflt;
        }
        try {
            long v = Long.parseLong(a.text().trim());
            if (v >= 1 && v <= (1L << 26)) {
                return v;
            }
        } catch (NumberFormatException e) {
            throw error(a, keyword + ": sharing another rewriter's capacity ('" + a.text().trim()
                    + "') is not supported; give a number of flows per core");
        }
        throw error(a, keyword + ": expected 1 to 67108864 flows per core, found '" + a.text().trim() + "'");
    }

    @Override
    public int inputs() {
        return specs.size();
    }

    @Override
    public int outputs() {
        return outputs;
    }

    /** Which packets the spec's patterns apply to. */
    private Expr eligible(RewriterSpec s) {
        Expr e = Expr.constant(true);
        if (protoGuard != 0) {
            long[] protos = protoGuard > 0 ? IntervalSet.point(protoGuard)
                    : IntervalSet.union(IntervalSet.point(6), IntervalSet.point(17));
            e = Expr.and(Expr.atom(Field.IP_PROTO, protos), Expr.atom(Field.IP_OFFSET, IntervalSet.point(0)));
        }
        int fam = s.pool.isEmpty() ? 0 : s.pool.get(0).family();
        if (fam != 0) {
            e = Expr.and(e, Expr.atom(Field.ETH_TYPE, IntervalSet.point(fam == 4 ? Field.ETH_IP4 : Field.ETH_IP6)));
        }
        return e;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        RewriterSpec s = specs.get(in);
        if (s.kind == RewriterSpec.Kind.DROP) {
            FlowState.Mapping m = run.state == null || !eligible(s).eval(p.v) ? null : run.state.lookup(id(), p);
            if (m == null) {
                if (run.trace != null) {
                    run.droppedBy = id() + " (input " + in + " spec drop, no mapping)";
                }
                return Out.DROP;
            }
            FlowState.restore(p, m);
            run.steps.add(replySteps.get(m.spec));
            if (run.trace != null) {
                run.trace(id() + " reply restored by the mapping of input " + m.spec);
            }
            return m.output;
        }
        if (!eligible(s).eval(p.v)) {
            if (s.kind == RewriterSpec.Kind.PASS) {
                return s.fout;
            }
            if (run.trace != null) {
                run.droppedBy = id() + " (packet not handled by " + decl.className() + ")";
            }
            return Out.DROP;
        }
        if (s.kind == RewriterSpec.Kind.PASS) {
            return s.fout;
        }
        int c = run.choose(s.pool.size());
        long[] orig = run.state == null ? null : FlowState.tuple(p);
        PatternRewrites.apply(s.pool.get(c), p, run);
        if (orig != null) {
            run.state.record(id(), orig, FlowState.tuple(p), in, s.rout);
        }
        run.steps.add(forwardSteps.get(in));
        if (run.trace != null) {
            run.trace(id() + " rewrite with " + s.pool.get(c));
        }
        return s.fout;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        requireIp(s);
        RewriterSpec sp = specs.get(in);
        if (sp.kind == RewriterSpec.Kind.DROP) {
            if (!s.reply) {
                throw error(sp.arg, "unsupported construct: forward traffic reaches input " + in + " of "
                        + decl.name() + ", whose spec is '" + sp.arg.normalized() + "' (replies only: a forward "
                        + "packet, a new flow, finds no mapping there); send replies in at the chain's reply "
                        + "ingress (its second 'ingress' entry)");
            }
            walkReply(s, in, out);
            return;
        }
        if (s.reply && specs.stream().anyMatch(RewriterSpec::maps)) {
            // Click looks every packet up first: a reply here could hit a mapping, or make one
            throw error(sp.arg, "unsupported construct: reply traffic reaches input " + in + " of " + decl.name()
                    + ", whose spec is '" + sp.arg.normalized() + "'; replies must enter a rewriter at a 'drop' "
                    + "input (restored by their flow's mapping, dropped without one)");
        }
        int unhandled = sp.kind == RewriterSpec.Kind.PASS ? sp.fout : Out.DROP;
        // Branch order (first match): non-first fragments of the handled protocols, then the handled packets,
        // then the whole state for the rest, since everything handled was claimed before it. Listing the
        // fragments first lets the compiler drop the "first fragment" test from the handled entries, and the
        // last branch needs no "not TCP/UDP" test: devices can express both widened forms.
        if (protoGuard != 0) {
            for (Cube c : eligible(sp).dnf()) {
                SymState t = restrict(s, c.without(Field.IP_OFFSET).with(Field.IP_OFFSET, IntervalSet.point(1)));
                if (t != null) {
                    out.emit(unhandled, t);
                }
            }
        }
        for (Cube c : eligible(sp).dnf()) {
            SymState t = restrict(s, c);
            if (t == null) {
                continue;
            }
            if (sp.kind == RewriterSpec.Kind.PASS) {
                out.emit(sp.fout, t);
            } else {
                out.emit(sp.fout, PatternRewrites.written(t.step(forwardSteps.get(in)), sp.pool));
            }
        }
        out.emit(unhandled, s);
    }

    /**
     * Reply traffic at a {@code drop} input: per forward spec, the packets of its reply shape leave at its
     * ROUTPUT with the fields the mapping restores unknown (flow state), then the rest is dropped.
     */
    private void walkReply(SymState s, int in, Out out) {
        if (protoGuard == 0) {
            throw error(specs.get(in).arg, "unsupported construct: reply traffic reaches input " + in + " of "
                    + decl.name() + "; IPAddrRewriter replies (mapped by address alone) are not synthesized");
        }
        List<List<Cube>> shapes = new ArrayList<>();
        for (int j = 0; j < specs.size(); j++) {
            RewriterSpec f = specs.get(j);
            List<Cube> shape = f.maps() ? replyShape(f).dnf() : List.of();
            for (int k = 0; k < j; k++) {
                for (Cube a : shapes.get(k)) {
                    for (Cube b : shape) {
                        if (a.overlaps(b)) {
                            throw error(specs.get(in).arg, "unsupported construct: replies to flows of input " + k
                                    + " and of input " + j + " of " + decl.name() + " can look alike, so the reply "
                                    + "output depends on which mapping a packet hits");
                        }
                    }
                }
            }
            shapes.add(shape);
        }
        // no fragments-first branch as in walk: a reply shape tests a port that excludes 0 (allocated or
        // rewritten ports), which already excludes non-first fragments on devices (their ports read 0)
        for (int j = 0; j < specs.size(); j++) {
            RewriterSpec f = specs.get(j);
            for (Cube c : shapes.get(j)) {
                SymState t = restrict(s, c);
                if (t != null) {
                    out.emit(f.rout, PatternRewrites.restored(t.step(replySteps.get(j)), f.pool));
                }
            }
        }
        out.emit(Out.DROP, s);
    }

    /** Reply packets a forward spec's mappings can answer: its rewritten tuples, reversed. */
    private Expr replyShape(RewriterSpec f) {
        return Expr.and(eligible(f), PatternRewrites.replyMatch(f.pool));
    }
}
