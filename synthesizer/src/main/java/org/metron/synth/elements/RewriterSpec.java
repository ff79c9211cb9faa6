package org.metron.synth.elements;

import org.metron.synth.SynthesisException;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ClickConfig;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.RewritePattern;

import java.util.ArrayList;
import java.util.List;

/**
 * One input spec of a {@link Rewriter}, as Click's IPRewriterInput reads it: {@code pattern SADDR SPORT DADDR
 * DPORT FOUT ROUT}, {@code pattern NAME FOUT ROUT} (an IPRewriterPatterns entry), a RoundRobinIPMapper or
 * MaglevIPMapper element's name (a pool, one pattern per new flow), {@code keep FOUT ROUT}, {@code pass OUT} /
 * {@code nochange OUT}, {@code drop} / {@code discard}.
 */
final class RewriterSpec {
    enum Kind { POOL, KEEP, PASS, DROP }

    final Kind kind;
    /** The patterns a new flow takes one of (none for pass and drop). */
    final List<RewritePattern> pool;
    final int fout;
    final int rout;
    /** How a flow's pattern is chosen from the pool: "roundrobin" or "maglev". */
    final String select;
    final Arg arg;

    private RewriterSpec(Kind kind, List<RewritePattern> pool, int fout, int rout, String select, Arg arg) {
        this.kind = kind;
        this.pool = pool;
        this.fout = fout;
        this.rout = rout;
        this.select = select;
        this.arg = arg;
    }

    /** True for specs that make mappings (a reply could hit one). */
    boolean maps() {
        return kind == Kind.POOL || kind == Kind.KEEP;
    }

    /**
     * Reads one input spec.
     *
     * @param owner    the rewriter, whose errors these are
     * @param addrOnly an IPAddrRewriter's spec: its patterns may not change ports
     */
    static RewriterSpec parse(Arg a, ClickConfig cfg, Element owner, boolean addrOnly) {
        return new Reader(owner, addrOnly, cfg).spec(a);
    }

    /** The parse of one rewriter's specs, with what reports its errors. */
    private static final class Reader {
        private final Element owner;
        private final boolean addrOnly;
        private final ClickConfig cfg;

        Reader(Element owner, boolean addrOnly, ClickConfig cfg) {
            this.owner = owner;
            this.addrOnly = addrOnly;
            this.cfg = cfg;
        }

        private SynthesisException error(Arg a, String msg) {
            return owner.error(a, msg);
        }

        RewriterSpec spec(Arg a) {
            String[] w = Args.words(a);
            try {
                switch (w[0]) {
                    case "pattern":
                        if (w.length == 7) {
                            RewritePattern p = RewritePattern.parse(w[1], w[2], w[3], w[4]);
                            checkAddrOnly(a, p);
                            return new RewriterSpec(Kind.POOL, List.of(p), port(w[5], a), port(w[6], a),
                                    "roundrobin", a);
                        }
                        if (w.length == 4) {
                            return new RewriterSpec(Kind.POOL, List.of(namedPattern(w[1], a)), port(w[2], a),
                                    port(w[3], a), "roundrobin", a);
                        }
                        throw error(a, "expected 'pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT' or "
                                + "'pattern NAME FOUTPUT ROUTPUT', found '" + a.normalized() + "'");
                    case "keep":
                        if (w.length != 3) {
                            throw error(a, "expected 'keep FOUTPUT ROUTPUT'");
                        }
                        return new RewriterSpec(Kind.KEEP, List.of(new RewritePattern(null, null, null, null)),
                                port(w[1], a), port(w[2], a), "roundrobin", a);
                    case "pass": case "nochange":
                        if (w.length != 2) {
                            throw error(a, "expected '" + w[0] + " OUTPUT'");
                        }
                        return new RewriterSpec(Kind.PASS, List.of(), port(w[1], a), 0, "", a);
                    case "drop": case "discard":
                        if (w.length != 1) {
                            throw error(a, "'" + w[0] + "' takes no further words");
                        }
                        return new RewriterSpec(Kind.DROP, List.of(), 0, 0, "", a);
                    default:
                        if (w.length == 1) {
                            return mapper(w[0], a);
                        }
                        throw error(a, "unknown input spec '" + a.normalized() + "' (expected pattern, keep, pass, "
                                + "drop or a RoundRobinIPMapper name)");
                }
            } catch (IllegalArgumentException e) {
                throw error(a, e.getMessage());
            }
        }

        private void checkAddrOnly(Arg a, RewritePattern p) {
            if (addrOnly && p.touchesPorts()) {
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

        private RewritePattern namedPattern(String name, Arg a) {
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

        private RewriterSpec mapper(String name, Arg a) {
            ElementDecl d = cfg.elements().get(name);
            if (d == null || !d.className().equals("RoundRobinIPMapper") && !d.className().equals("MaglevIPMapper")) {
                throw error(a, "input spec '" + name + "' names no RoundRobinIPMapper/MaglevIPMapper element of "
                        + "this NF");
            }
            String select = d.className().equals("MaglevIPMapper") ? "maglev" : "roundrobin";
            List<RewritePattern> pool = new ArrayList<>();
            int fout = -1;
            int rout = -1;
            for (Arg p : d.args()) {
                String[] w = Args.words(p);
                if (w.length != 6) {
                    throw new SynthesisException(owner.nf, name, p.line(), p.column(),
                            "RoundRobinIPMapper pattern must be 'SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT'");
                }
                RewritePattern rp = RewritePattern.parse(w[0], w[1], w[2], w[3]);
                checkAddrOnly(a, rp);
                int fo = port(w[4], p);
                int ro = port(w[5], p);
                if (fout >= 0 && (fo != fout || ro != rout)) {
                    throw new SynthesisException(owner.nf, name, p.line(), p.column(),
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
                    throw error(a, "unsupported construct: RoundRobinIPMapper '" + name + "' keeps a field ('-') in "
                            + "some patterns and rewrites it in others");
                }
            }
            return new RewriterSpec(Kind.POOL, pool, fout, rout, select, a);
        }
    }
}
