package org.metron.synth.elements;

import org.metron.synth.IpPrefix;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ClickConfig;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.IdleTimeouts;
import org.metron.synth.core.Out;
import org.metron.synth.core.RewritePattern;
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
 * {@code pass OUT} / {@code nochange OUT}, {@code drop} / {@code discard}.
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
    private enum Kind { POOL, KEEP, PASS, DROP }

    private static final class Spec {
        final Kind kind;
        final List<RewritePattern> pool;
        final int fout;
        final int rout;
        final String select;
        final Arg arg;

        Spec(Kind kind, List<RewritePattern> pool, int fout, int rout, String select, Arg arg) {
            this.kind = kind;
            this.pool = pool;
            this.fout = fout;
            this.rout = rout;
            this.select = select;
            this.arg = arg;
        }
    }

    private static final Set<String> KEYWORDS = Set.of("TIMEOUT", "TCP_TIMEOUT", "TCP_DONE_TIMEOUT",
            "TCP_NODATA_TIMEOUT", "UDP_TIMEOUT", "UDP_STREAMING_TIMEOUT", "GUARANTEE", "REAP_INTERVAL",
            "REAP_TIME", "REAP_TCP", "MAPPING_CAPACITY", "CAPACITY", "DST_ANNO", "SET_DST_ANNO", "HANDLE_ICMP");

    private final List<Spec> specs = new ArrayList<>();
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
            Spec s = spec(a, cfg);
            specs.add(s);
            max = Math.max(max, Math.max(s.fout, s.rout));
        }
        outputs = max + 1;
        timeouts = idleTimeouts(args.keywords::get);
        long capacity = capacity(args, "CAPACITY", 0);
        capacity = capacity(args, "MAPPING_CAPACITY", capacity);  // read after CAPACITY, as in Click
        for (int i = 0; i < specs.size(); i++) {
            Spec sp = specs.get(i);
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

    private Spec spec(Arg a, ClickConfig cfg) {
        String[] w = Args.words(a);
        try {
            switch (w[0]) {
                case "pattern":
                    if (w.length == 7) {
                        RewritePattern p = RewritePattern.parse(w[1], w[2], w[3], w[4]);
                        checkAddrOnly(a, p);
                        return new Spec(Kind.POOL, List.of(p), port(w[5], a), port(w[6], a), "roundrobin", a);
                    }
                    if (w.length == 4) {
                        return new Spec(Kind.POOL, List.of(namedPattern(w[1], a, cfg)), port(w[2], a), port(w[3], a),
                                "roundrobin", a);
                    }
                    throw error(a, "expected 'pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT' or "
                            + "'pattern NAME FOUTPUT ROUTPUT', found '" + a.normalized() + "'");
                case "keep":
                    if (w.length != 3) {
                        throw error(a, "expected 'keep FOUTPUT ROUTPUT'");
                    }
                    return new Spec(Kind.KEEP, List.of(new RewritePattern(null, null, null, null)), port(w[1], a),
                            port(w[2], a), "roundrobin", a);
                case "pass": case "nochange":
                    if (w.length != 2) {
                        throw error(a, "expected '" + w[0] + " OUTPUT'");
                    }
                    return new Spec(Kind.PASS, List.of(), port(w[1], a), 0, "", a);
                case "drop": case "discard":
                    if (w.length != 1) {
                        throw error(a, "'" + w[0] + "' takes no further words");
                    }
                    return new Spec(Kind.DROP, List.of(), 0, 0, "", a);
                default:
                    if (w.length == 1) {
                        return mapper(w[0], a, cfg);
                    }
                    throw error(a, "unknown input spec '" + a.normalized() + "' (expected pattern, keep, pass, drop "
                            + "or a RoundRobinIPMapper name)");
            }
        } catch (IllegalArgumentException e) {
            throw error(a, e.getMessage());
        }
    }

    private void checkAddrOnly(Arg a, RewritePattern p) {
        if (protoGuard == 0 && p.touchesPorts()) {
            throw error(a, "IPAddrRewriter patterns cannot change ports (use '-')");
        }
    }

    private int port(String t, Arg a) {
        try {
            int v = Integer.parseInt(t);
            if (v >= 0 && v < 64) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw error(a, "expected an output port number, found '" + t + "'");
    }

    private RewritePattern namedPattern(String name, Arg a, ClickConfig cfg) {
        for (ElementDecl d : cfg.elements().values()) {
            if (!d.className().equals("IPRewriterPatterns")) {
                continue;
            }
            for (Arg p : d.args()) {
                String[] w = Args.words(p);
                if (w.length == 5 && w[0].equals(name)) {
                    RewritePattern rp = RewritePattern.parse(w[1], w[2], w[3], w[4]);
                    checkAddrOnly(a, rp);
                    return rp;
                }
            }
        }
        throw error(a, "no IPRewriterPatterns element defines pattern '" + name + "'");
    }

    private Spec mapper(String name, Arg a, ClickConfig cfg) {
        ElementDecl d = cfg.elements().get(name);
        if (d == null || !d.className().equals("RoundRobinIPMapper") && !d.className().equals("MaglevIPMapper")) {
            throw error(a, "input spec '" + name + "' names no RoundRobinIPMapper/MaglevIPMapper element of this NF");
        }
        String select = d.className().equals("MaglevIPMapper") ? "maglev" : "roundrobin";
        List<RewritePattern> pool = new ArrayList<>();
        int fout = -1;
        int rout = -1;
        for (Arg p : d.args()) {
            String[] w = Args.words(p);
            if (w.length != 6) {
                throw new org.metron.synth.SynthesisException(nf, name, p.line(), p.column(),
                        "RoundRobinIPMapper pattern must be 'SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT'");
            }
            RewritePattern rp = RewritePattern.parse(w[0], w[1], w[2], w[3]);
            checkAddrOnly(a, rp);
            int fo = port(w[4], p);
            int ro = port(w[5], p);
            if (fout >= 0 && (fo != fout || ro != rout)) {
                throw new org.metron.synth.SynthesisException(nf, name, p.line(), p.column(),
                        "unsupported construct: RoundRobinIPMapper patterns with different outputs");
            }
            fout = fo;
            rout = ro;
            pool.add(rp);
        }
        if (pool.isEmpty()) {
            throw error(a, "RoundRobinIPMapper '" + name + "' has no patterns");
        }
        RewritePattern first = pool.get(0);
        for (RewritePattern rp : pool) {
            if (rp.family() != first.family()) {
                throw error(a, "unsupported construct: RoundRobinIPMapper '" + name + "' mixes IPv4 and IPv6");
            }
            if ((rp.saddr == null) != (first.saddr == null) || (rp.daddr == null) != (first.daddr == null)
                    || (rp.sport == null) != (first.sport == null) || (rp.dport == null) != (first.dport == null)) {
                throw error(a, "unsupported construct: RoundRobinIPMapper '" + name + "' keeps a field ('-') in some "
                        + "patterns and rewrites it in others");
            }
        }
        return new Spec(Kind.POOL, pool, fout, rout, select, a);
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
    private Expr eligible(Spec s) {
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
        Spec s = specs.get(in);
        if (s.kind == Kind.DROP) {
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
            if (s.kind == Kind.PASS) {
                return s.fout;
            }
            if (run.trace != null) {
                run.droppedBy = id() + " (packet not handled by " + decl.className() + ")";
            }
            return Out.DROP;
        }
        if (s.kind == Kind.PASS) {
            return s.fout;
        }
        int c = run.choose(s.pool.size());
        long[] orig = run.state == null ? null : FlowState.tuple(p);
        apply(s.pool.get(c), p, run);
        if (orig != null) {
            run.state.record(id(), orig, FlowState.tuple(p), in, s.rout);
        }
        run.steps.add(forwardSteps.get(in));
        if (run.trace != null) {
            run.trace(id() + " rewrite with " + s.pool.get(c));
        }
        return s.fout;
    }

    /** Applies one pattern to a concrete packet; port ranges allocate their lowest port (see Run.allocated). */
    public static void apply(RewritePattern rp, Packet p, Run run) {
        if (rp.saddr != null) {
            setAddr(p, rp.saddr, true);
        }
        if (rp.daddr != null) {
            setAddr(p, rp.daddr, false);
        }
        if (rp.sport != null) {
            setPort(p, Field.L4_SRC, rp.sport, run);
        }
        if (rp.dport != null) {
            setPort(p, Field.L4_DST, rp.dport, run);
        }
    }

    private static void setPort(Packet p, Field f, int[] r, Run run) {
        p.set(f, r[0]);
        if (r[0] != r[1]) {
            run.allocated.put(f, r[0] + "-" + r[1]);
        } else {
            run.allocated.remove(f);
        }
    }

    private static void setAddr(Packet p, IpPrefix a, boolean src) {
        if (a.isIp6()) {
            p.set(src ? Field.IP6_SRC_HI : Field.IP6_DST_HI, a.address().shiftRight(64).longValue());
            p.set(src ? Field.IP6_SRC_LO : Field.IP6_DST_LO, a.address().longValue());
        } else {
            p.set(src ? Field.IP4_SRC : Field.IP4_DST, a.address().longValue());
        }
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        requireIp(s);
        Spec sp = specs.get(in);
        if (sp.kind == Kind.DROP) {
            if (!s.reply) {
                throw error(sp.arg, "unsupported construct: forward traffic reaches input " + in + " of "
                        + decl.name() + ", whose spec is '" + sp.arg.normalized() + "' (replies only: a forward "
                        + "packet, a new flow, finds no mapping there); send replies in at the chain's reply "
                        + "ingress (its second 'ingress' entry)");
            }
            walkReply(s, in, out);
            return;
        }
        if (s.reply && specs.stream().anyMatch(f -> f.kind == Kind.POOL || f.kind == Kind.KEEP)) {
            // Click looks every packet up first: a reply here could hit a mapping, or make one
            throw error(sp.arg, "unsupported construct: reply traffic reaches input " + in + " of " + decl.name()
                    + ", whose spec is '" + sp.arg.normalized() + "'; replies must enter a rewriter at a 'drop' "
                    + "input (restored by their flow's mapping, dropped without one)");
        }
        int unhandled = sp.kind == Kind.PASS ? sp.fout : Out.DROP;
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
            if (sp.kind == Kind.PASS) {
                out.emit(sp.fout, t);
            } else {
                out.emit(sp.fout, written(t.step(forwardSteps.get(in)), sp.pool));
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
            Spec f = specs.get(j);
            List<Cube> shape = f.kind == Kind.POOL || f.kind == Kind.KEEP ? replyShape(f).dnf() : List.of();
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
            Spec f = specs.get(j);
            for (Cube c : shapes.get(j)) {
                SymState t = restrict(s, c);
                if (t != null) {
                    out.emit(f.rout, restored(t.step(replySteps.get(j)), f.pool));
                }
            }
        }
        out.emit(Out.DROP, s);
    }

    /** Reply packets a forward spec's mappings can answer: its rewritten tuples, reversed. */
    private Expr replyShape(Spec f) {
        Expr any = Expr.constant(false);
        for (RewritePattern rp : f.pool) {
            Expr e = Expr.constant(true);
            if (rp.saddr != null) {
                e = Expr.and(e, addrIs(rp.saddr, false));
            }
            if (rp.daddr != null) {
                e = Expr.and(e, addrIs(rp.daddr, true));
            }
            if (rp.sport != null) {
                e = Expr.and(e, Expr.atom(Field.L4_DST, IntervalSet.range(rp.sport[0], rp.sport[1])));
            }
            if (rp.dport != null) {
                e = Expr.and(e, Expr.atom(Field.L4_SRC, IntervalSet.range(rp.dport[0], rp.dport[1])));
            }
            any = Expr.or(any, e);
        }
        return Expr.and(eligible(f), any);
    }

    private static Expr addrIs(IpPrefix a, boolean src) {
        if (a.isIp6()) {
            return Expr.and(Expr.atom(src ? Field.IP6_SRC_HI : Field.IP6_DST_HI,
                    IntervalSet.point(a.address().shiftRight(64).longValue())),
                    Expr.atom(src ? Field.IP6_SRC_LO : Field.IP6_DST_LO, IntervalSet.point(a.address().longValue())));
        }
        return Expr.atom(src ? Field.IP4_SRC : Field.IP4_DST, IntervalSet.point(a.address().longValue()));
    }

    /** The state after a reply restore: each field a pattern rewrote holds, reversed, some flow's original value. */
    private static SymState restored(SymState t, List<RewritePattern> pool) {
        int fam = pool.get(0).family();
        List<Field> fields = new ArrayList<>();
        for (RewritePattern rp : pool) {
            if (rp.saddr != null) {
                fields.addAll(fam == 6 ? List.of(Field.IP6_DST_HI, Field.IP6_DST_LO) : List.of(Field.IP4_DST));
            }
            if (rp.daddr != null) {
                fields.addAll(fam == 6 ? List.of(Field.IP6_SRC_HI, Field.IP6_SRC_LO) : List.of(Field.IP4_SRC));
            }
            if (rp.sport != null) {
                fields.add(Field.L4_DST);
            }
            if (rp.dport != null) {
                fields.add(Field.L4_SRC);
            }
        }
        SymState r = t;
        for (Field f : fields) {
            r = r.write(f, IntervalSet.range(0, f.max()), true);
        }
        return r;
    }

    /** The state after a pool rewrite: each written field holds one of the pool's values. */
    private static SymState written(SymState t, List<RewritePattern> pool) {
        long[][] vals = new long[Field.COUNT][];
        for (RewritePattern rp : pool) {
            if (rp.saddr != null) {
                addAddr(vals, rp.saddr, true);
            }
            if (rp.daddr != null) {
                addAddr(vals, rp.daddr, false);
            }
            if (rp.sport != null) {
                add(vals, Field.L4_SRC, IntervalSet.range(rp.sport[0], rp.sport[1]));
            }
            if (rp.dport != null) {
                add(vals, Field.L4_DST, IntervalSet.range(rp.dport[0], rp.dport[1]));
            }
        }
        SymState r = t;
        for (Field f : Field.values()) {
            if (vals[f.ordinal()] != null) {
                r = r.write(f, vals[f.ordinal()], true);
            }
        }
        return r;
    }

    private static void addAddr(long[][] vals, IpPrefix a, boolean src) {
        if (a.isIp6()) {
            add(vals, src ? Field.IP6_SRC_HI : Field.IP6_DST_HI, IntervalSet.point(a.address().shiftRight(64)
                    .longValue()));
            add(vals, src ? Field.IP6_SRC_LO : Field.IP6_DST_LO, IntervalSet.point(a.address().longValue()));
        } else {
            add(vals, src ? Field.IP4_SRC : Field.IP4_DST, IntervalSet.point(a.address().longValue()));
        }
    }

    private static void add(long[][] vals, Field f, long[] set) {
        vals[f.ordinal()] = vals[f.ordinal()] == null ? set : IntervalSet.union(vals[f.ordinal()], set);
    }
}
