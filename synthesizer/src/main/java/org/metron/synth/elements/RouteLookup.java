package org.metron.synth.elements;

import org.metron.synth.IpPrefix;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.filter.PatternParser;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * LookupIPRoute / LinearIPLookup / RadixIPLookup / DirectIPLookup (ADDR/LEN [GATEWAY] OUTPUT, ...): longest
 * prefix match on the destination address; no route = drop. The gateway only sets Click's annotation and does
 * not change headers. Metron accepts IPv6 routes in the same table.
 */
public final class RouteLookup extends Element {
    private final List<IpPrefix> prefixes = new ArrayList<>();
    private final List<Integer> outs = new ArrayList<>();
    private final List<Integer> byLength;
    private final List<Cube> cubes = new ArrayList<>();
    private final int outputs;
    /** Reference lookup: per family, per prefix length, network → route index. */
    private final Map<Long, Integer>[] v4 = newMaps(33);
    private final Map<BigInteger, Integer>[] v6 = newMaps(129);

    @SuppressWarnings("unchecked")
    private static <K> Map<K, Integer>[] newMaps(int n) {
        Map<K, Integer>[] m = new Map[n];
        for (int i = 0; i < n; i++) {
            m[i] = new HashMap<>();
        }
        return m;
    }

    RouteLookup(String nf, ElementDecl decl) {
        super(nf, decl);
        int max = 0;
        for (Arg a : decl.args()) {
            String[] w = Args.words(a);
            if (w.length < 2 || w.length > 3) {
                throw error(a, "route must be 'ADDR/LEN [GATEWAY] OUTPUT', found '" + a.normalized() + "'");
            }
            IpPrefix p;
            try {
                p = IpPrefix.parse(w[0]);
            } catch (IllegalArgumentException e) {
                throw error(a, e.getMessage());
            }
            int out;
            try {
                out = Integer.parseInt(w[w.length - 1]);
            } catch (NumberFormatException e) {
                throw error(a, "route output must be a port number, found '" + w[w.length - 1] + "'");
            }
            int idx = prefixes.size();
            Integer dup = p.isIp6() ? v6[p.length()].put(p.address(), idx) : v4[p.length()].put(
                    p.address().longValue(), idx);
            if (dup != null) {
                throw error(a, "duplicate route " + p + " (also route " + dup + ")");
            }
            prefixes.add(p);
            outs.add(out);
            cubes.add(PatternParser.addrMatch(p, false).dnf().get(0));
            max = Math.max(max, out);
        }
        if (prefixes.isEmpty()) {
            throw error(decl.className() + " needs at least one route");
        }
        outputs = max + 1;
        byLength = new ArrayList<>();
        for (int i = 0; i < prefixes.size(); i++) {
            byLength.add(i);
        }
        // longest prefix first; equal lengths never overlap (duplicates are refused)
        byLength.sort(Comparator.comparingInt((Integer i) -> -prefixes.get(i).length()));
    }

    /** Each route's destination prefix as a cube, in configuration order. */
    public List<Cube> routeCubes() {
        return java.util.Collections.unmodifiableList(cubes);
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
        if (p.isIp6()) {
            BigInteger a = new BigInteger(Long.toUnsignedString(p.get(Field.IP6_DST_HI))).shiftLeft(64)
                    .or(new BigInteger(Long.toUnsignedString(p.get(Field.IP6_DST_LO))));
            for (int len = 128; len >= 0; len--) {
                if (v6[len].isEmpty()) {
                    continue;
                }
                BigInteger net = len == 0 ? BigInteger.ZERO : a.shiftRight(128 - len).shiftLeft(128 - len);
                Integer r = v6[len].get(net);
                if (r != null) {
                    return outs.get(r);
                }
            }
        } else {
            long a = p.get(Field.IP4_DST);
            for (int len = 32; len >= 0; len--) {
                if (v4[len].isEmpty()) {
                    continue;
                }
                long net = len == 0 ? 0 : (a >>> (32 - len)) << (32 - len);
                Integer r = v4[len].get(net);
                if (r != null) {
                    return outs.get(r);
                }
            }
        }
        if (run.trace != null) {
            run.droppedBy = id() + " (no route)";
        }
        return Out.DROP;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        requireIp(s);
        for (int i : byLength) {
            SymState t = restrict(s, cubes.get(i));
            if (t == null) {
                continue;
            }
            out.emit(outs.get(i), t);
            if (t == s) {
                return;
            }
        }
        out.emit(Out.DROP, s);
    }
}
