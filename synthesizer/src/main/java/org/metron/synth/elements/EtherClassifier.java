package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.filter.Expr;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.OutsideModelException;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;

/**
 * Classifier(OFFSET/VALUE[%MASK] ..., -): byte-pattern classification, first match wins, rule i to output i.
 * Clauses of one rule are ANDed, {@code !} negates a clause. Metron supports offsets inside the Ethernet
 * header only (dst MAC, src MAC, EtherType: bytes 0..13 of the frame); deeper offsets are refused as an
 * unsupported construct (use IPClassifier, which does not depend on IP header lengths).
 */
public final class EtherClassifier extends Element {
    /** One clause: bytes [off, off+len) of the frame, value and mask. */
    private static final class Clause {
        final int off;
        final byte[] value;
        final byte[] mask;
        final boolean negate;

        Clause(int off, byte[] value, byte[] mask, boolean negate) {
            this.off = off;
            this.value = value;
            this.mask = mask;
            this.negate = negate;
        }
    }

    private final List<List<Clause>> rules = new ArrayList<>();

    EtherClassifier(String nf, ElementDecl decl) {
        super(nf, decl);
        if (decl.args().isEmpty()) {
            throw error("Classifier needs at least one pattern");
        }
        for (Arg a : decl.args()) {
            List<Clause> cs = new ArrayList<>();
            String t = a.text().trim();
            if (!t.equals("-")) {
                for (String w : t.split("\\s+")) {
                    cs.add(clause(a, w));
                }
            }
            rules.add(cs);
        }
    }

    private Clause clause(Arg a, String w) {
        boolean neg = w.startsWith("!");
        String s = neg ? w.substring(1) : w;
        int slash = s.indexOf('/');
        if (slash <= 0) {
            throw error(a, "Classifier clause '" + w + "' must be OFFSET/HEXVALUE[%HEXMASK]");
        }
        int off;
        try {
            off = Integer.parseInt(s.substring(0, slash));
        } catch (NumberFormatException e) {
            throw error(a, "bad offset in Classifier clause '" + w + "'");
        }
        String rest = s.substring(slash + 1);
        int pct = rest.indexOf('%');
        String val = pct < 0 ? rest : rest.substring(0, pct);
        String msk = pct < 0 ? null : rest.substring(pct + 1);
        if (!val.matches("([0-9a-fA-F]{2})+") || msk != null && !msk.matches("([0-9a-fA-F]{2})+")
                || msk != null && msk.length() != val.length()) {
            throw error(a, "Classifier clause '" + w + "' needs an even number of hex digits (and a mask of the "
                    + "same length)");
        }
        int len = val.length() / 2;
        if (off + len > 14) {
            throw error(a, "unsupported construct: Classifier offset " + off + " reaches beyond the Ethernet header"
                    + " (bytes 0..13); use IPClassifier for IP fields");
        }
        byte[] v = new byte[len];
        byte[] m = new byte[len];
        for (int i = 0; i < len; i++) {
            v[i] = (byte) Integer.parseInt(val.substring(2 * i, 2 * i + 2), 16);
            m[i] = msk == null ? (byte) 0xff : (byte) Integer.parseInt(msk.substring(2 * i, 2 * i + 2), 16);
        }
        return new Clause(off, v, m, neg);
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return rules.size();
    }

    private static byte[] frameHeader(Packet p) {
        byte[] h = new byte[14];
        long dst = p.get(Field.ETH_DST);
        long src = p.get(Field.ETH_SRC);
        for (int i = 0; i < 6; i++) {
            h[i] = (byte) (dst >>> (40 - 8 * i));
            h[6 + i] = (byte) (src >>> (40 - 8 * i));
        }
        h[12] = (byte) (p.get(Field.ETH_TYPE) >>> 8);
        h[13] = (byte) p.get(Field.ETH_TYPE);
        return h;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        if (run.stripped != 0) {
            if (run.trace != null) {
                run.droppedBy = id() + " (no Ethernet header)";
            }
            return Out.DROP;
        }
        boolean tagged = p.check == HeaderCheck.NOT_IP && p.get(Field.VLAN) != 0;
        byte[] h = frameHeader(p);
        for (int r = 0; r < rules.size(); r++) {
            boolean ok = true;
            for (Clause c : rules.get(r)) {
                if (tagged && c.off + c.value.length > 12) {
                    // the packet carries the tagged frame's EtherType; Click would read the tag's at offset 12
                    throw new OutsideModelException(id() + " reads the EtherType of a VLAN-tagged frame");
                }
                boolean eq = true;
                for (int i = 0; i < c.value.length; i++) {
                    if ((h[c.off + i] & c.mask[i]) != (c.value[i] & c.mask[i])) {
                        eq = false;
                        break;
                    }
                }
                if (eq == c.negate) {
                    ok = false;
                    break;
                }
            }
            if (ok) {
                return r;
            }
        }
        if (run.trace != null) {
            run.droppedBy = id() + " (no pattern matched)";
        }
        return Out.DROP;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        requireEthernet(s);
        for (int r = 0; r < rules.size(); r++) {
            Expr e = Expr.constant(true);
            for (Clause c : rules.get(r)) {
                Expr x = clauseExpr(c);
                e = Expr.and(e, c.negate ? Expr.not(x) : x);
            }
            for (Cube c : e.dnf()) {
                SymState t = restrict(s, c);
                if (t == null) {
                    continue;
                }
                out.emit(r, t);
                if (t == s) {
                    return;
                }
            }
        }
        out.emit(Out.DROP, s);
    }

    /** The clause as per-field constraints on the header fields its bytes cover. */
    private Expr clauseExpr(Clause c) {
        Expr e = Expr.constant(true);
        int[][] spans = {{0, 6}, {6, 12}, {12, 14}};
        Field[] fs = {Field.ETH_DST, Field.ETH_SRC, Field.ETH_TYPE};
        for (int k = 0; k < 3; k++) {
            long val = 0;
            long mask = 0;
            boolean touched = false;
            for (int b = spans[k][0]; b < spans[k][1]; b++) {
                val <<= 8;
                mask <<= 8;
                int i = b - c.off;
                if (i >= 0 && i < c.value.length) {
                    val |= c.value[i] & 0xff;
                    mask |= c.mask[i] & 0xff;
                    touched = true;
                }
            }
            if (touched && mask != 0) {
                e = Expr.and(e, Expr.atom(fs[k], maskedSet(fs[k], val & mask, mask)));
            }
        }
        return e;
    }

    private long[] maskedSet(Field f, long val, long mask) {
        long full = f.max();
        long free = full & ~mask;
        if ((free & (free + 1)) == 0) {
            return IntervalSet.range(val, val | free);
        }
        if (f.width() > 16) {
            throw error("unsupported construct: Classifier mask " + Long.toHexString(mask) + " on " + f
                    + " is not a prefix mask");
        }
        long[] set = IntervalSet.EMPTY;
        for (long v = 0; v <= full; v++) {
            if ((v & mask) == val) {
                set = IntervalSet.union(set, IntervalSet.point(v));
            }
        }
        return set;
    }
}
