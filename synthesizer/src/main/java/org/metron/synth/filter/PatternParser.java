package org.metron.synth.filter;

import org.metron.synth.IpPrefix;
import org.metron.synth.SynthesisException;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Parses Click's IPFilter/IPClassifier pattern language into an {@link Expr}: host/net/port primitives with
 * src/dst/"src or dst"/"src and dst", protocols, port ranges and relations, {@code tcp opt}, {@code ip
 * proto/tos/dscp/ttl/frag/unfrag}, {@code icmp type}, {@code and/or/not} (also {@code && || !}), parentheses,
 * implicit {@code and} between adjacent primitives, and Click's repeated-primitive shorthand
 * ({@code src host A or B}). Metron extensions: IPv6 addresses/prefixes, {@code ip vers 4|6}, {@code ip mf},
 * {@code ip firstfrag}, relations on every numeric field, ranges {@code lo-hi}.
 */
public final class PatternParser {
    private static final Map<String, Integer> PROTOS = Map.of("tcp", 6, "udp", 17, "icmp", 1, "icmp6", 58,
            "icmpv6", 58, "gre", 47, "esp", 50, "ah", 51, "sctp", 132, "igmp", 2);
    private static final Map<String, Integer> PORTS = Map.ofEntries(Map.entry("http", 80), Map.entry("www", 80),
            Map.entry("https", 443), Map.entry("ssh", 22), Map.entry("telnet", 23), Map.entry("smtp", 25),
            Map.entry("domain", 53), Map.entry("dns", 53), Map.entry("ftp", 21), Map.entry("ntp", 123),
            Map.entry("snmp", 161), Map.entry("bgp", 179), Map.entry("pop3", 110), Map.entry("imap", 143));
    private static final Map<String, Integer> ICMP_TYPES = Map.of("echo-reply", 0, "unreachable", 3,
            "redirect", 5, "echo", 8, "time-exceeded", 11);
    private static final Map<String, Field> TCP_OPTS = Map.of("fin", Field.TCP_FIN, "syn", Field.TCP_SYN,
            "rst", Field.TCP_RST, "psh", Field.TCP_PSH, "ack", Field.TCP_ACK, "urg", Field.TCP_URG);

    private final String text;
    private final int line;
    private final int column;
    private final List<String> toks = new ArrayList<>();
    private final List<Integer> offs = new ArrayList<>();
    private int i;
    private Function<Integer, Expr> repeat;

    private PatternParser(String text, int line, int column) {
        this.text = text;
        this.line = line;
        this.column = column;
        tokenize();
    }

    /**
     * Parses a pattern.
     *
     * @param text   pattern text
     * @param line   line of the text's first character in the NF's Click source
     * @param column column of that character
     * @return the pattern
     * @throws SynthesisException with the line:col of the offending token
     */
    public static Expr parse(String text, int line, int column) {
        PatternParser p = new PatternParser(text, line, column);
        if (p.toks.isEmpty()) {
            throw p.error(0, "empty pattern");
        }
        Expr e = p.or();
        if (p.i < p.toks.size()) {
            throw p.error(p.i, "unexpected '" + p.toks.get(p.i) + "' in pattern");
        }
        return e;
    }

    private void tokenize() {
        int n = text.length();
        int k = 0;
        while (k < n) {
            char c = text.charAt(k);
            if (Character.isWhitespace(c)) {
                k++;
                continue;
            }
            int s = k;
            if (c == '(' || c == ')') {
                k++;
            } else if (text.startsWith("&&", k) || text.startsWith("||", k)) {
                k += 2;
            } else if (c == '!' && !text.startsWith("!=", k)) {
                k++;
            } else if (c == '<' || c == '>' || c == '=' || c == '!') {
                k++;
                if (k < n && text.charAt(k) == '=') {
                    k++;
                }
            } else {
                while (k < n && !Character.isWhitespace(text.charAt(k)) && "()<>=!&|".indexOf(text.charAt(k)) < 0) {
                    k++;
                }
            }
            toks.add(text.substring(s, k));
            offs.add(s);
        }
    }

    private SynthesisException error(int tok, String msg) {
        int off = tok < offs.size() ? offs.get(tok) : text.length();
        int l = line;
        int c = column;
        for (int k = 0; k < off; k++) {
            if (text.charAt(k) == '\n') {
                l++;
                c = 1;
            } else {
                c++;
            }
        }
        return new SynthesisException(null, null, l, c, msg);
    }

    private String peek() {
        return i < toks.size() ? toks.get(i) : null;
    }

    private String peek(int ahead) {
        return i + ahead < toks.size() ? toks.get(i + ahead) : null;
    }

    private boolean accept(String s) {
        if (s.equals(peek())) {
            i++;
            return true;
        }
        return false;
    }

    private String next(String what) {
        if (i >= toks.size()) {
            throw error(i, "expected " + what + " at end of pattern");
        }
        return toks.get(i++);
    }

    // ---- boolean structure --------------------------------------------------------------------------------

    private Expr or() {
        Expr e = and();
        while (accept("or") || accept("||")) {
            e = Expr.or(e, and());
        }
        return e;
    }

    private Expr and() {
        Expr e = unary();
        while (true) {
            if (accept("and") || accept("&&")) {
                e = Expr.and(e, unary());
            } else if (peek() != null && !peek().equals(")") && !peek().equals("or") && !peek().equals("||")) {
                e = Expr.and(e, unary());
            } else {
                return e;
            }
        }
    }

    private Expr unary() {
        if (accept("not") || accept("!")) {
            return Expr.not(unary());
        }
        if (accept("(")) {
            int open = i - 1;
            Expr e = or();
            if (!accept(")")) {
                throw error(i < toks.size() ? i : open, "expected ')' to close '(' of the pattern");
            }
            return e;
        }
        return primitive();
    }

    // ---- primitives ---------------------------------------------------------------------------------------

    private Expr primitive() {
        int at = i;
        String t = next("a pattern primitive");
        switch (t) {
            case "true": case "all": case "-": case "any":
                return Expr.TRUE;
            case "false": case "none":
                return Expr.FALSE;
            case "ip":
                return ipPrimitive();
            case "icmp":
                if (accept("type")) {
                    // a transport test: in Click it holds for first fragments only (a later one has no ICMP
                    // header, whatever its type field reads)
                    return Expr.and(Expr.and(icmp(), Expr.atom(Field.IP_OFFSET, IntervalSet.point(0))),
                            Expr.atom(Field.ICMP_TYPE, relation(Field.ICMP_TYPE, ICMP_TYPES)));
                }
                return icmp();
            case "proto":
                return proto(next("a protocol"), i - 1);
            case "src": case "dst":
                return directed(t);
            case "host": case "net": case "port":
                i--;
                return directed("src or dst");
            case "tcp": case "udp":
                if (t.equals("tcp") && accept("opt")) {
                    return tcpOpt();
                }
                if (("src".equals(peek()) || "dst".equals(peek())) && "port".equals(peek(1))) {
                    String dir = next("src/dst");
                    i++;
                    return port(dir, t);
                }
                if (accept("port")) {
                    return port("src or dst", t);
                }
                return proto(t, at);
            default:
                break;
        }
        if (PROTOS.containsKey(t)) {
            return proto(t, at);
        }
        if (repeat != null && (Character.isDigit(t.charAt(0)) || t.indexOf(':') >= 0 || "<>=!".indexOf(t.charAt(0)) >= 0
                || PORTS.containsKey(t))) {
            i--;
            return repeat.apply(i);
        }
        if (looksLikeAddress(t)) {
            i--;
            return addrPrimitive("src or dst", "host");
        }
        throw error(at, "unknown pattern primitive '" + t + "'");
    }

    private static boolean looksLikeAddress(String t) {
        return t.matches("\\d+\\.\\d+\\.\\d+\\.\\d+(/\\d+)?") || t.indexOf(':') >= 0;
    }

    private Expr directed(String first) {
        String dir = first;
        if (("or".equals(peek()) || "and".equals(peek())) && "dst".equals(peek(1)) && first.equals("src")) {
            dir = "src " + next("or/and") + " dst";
            i++;
        }
        String t = peek();
        if ("tcp".equals(t) || "udp".equals(t)) {
            i++;
            if (!accept("port")) {
                throw error(i, "expected 'port' after '" + dir + " " + t + "'");
            }
            return port(dir, t);
        }
        if (accept("port")) {
            return port(dir, null);
        }
        if (accept("host")) {
            return addrPrimitive(dir, "host");
        }
        if (accept("net")) {
            return addrPrimitive(dir, "net");
        }
        if (t != null && looksLikeAddress(t)) {
            return addrPrimitive(dir, "host");
        }
        throw error(i, "expected 'host', 'net' or 'port' after '" + dir + "'");
    }

    private Expr addrPrimitive(String dir, String kind) {
        int at = i;
        String a = next("an address");
        Expr e = addr(dir, kind, a, at);
        repeat = k -> {
            int pos = i;
            String v = next("an address");
            return addr(dir, kind, v, pos);
        };
        return e;
    }

    private Expr addr(String dir, String kind, String text, int at) {
        IpPrefix p;
        try {
            p = IpPrefix.parse(text);
        } catch (IllegalArgumentException e) {
            throw error(at, "expected an IPv4/IPv6 " + (kind.equals("net") ? "prefix" : "address") + ", found '"
                    + text + "'");
        }
        if (kind.equals("host") && text.indexOf('/') >= 0) {
            throw error(at, "'host' takes an address without /length, found '" + text + "'; use 'net'");
        }
        if (kind.equals("net") && text.indexOf('/') < 0) {
            throw error(at, "'net' needs a prefix length, found '" + text + "'");
        }
        return directions(dir, addrMatch(p, true), addrMatch(p, false));
    }

    /** Matches packets whose source (or destination) address is in the prefix; implies the family. */
    public static Expr addrMatch(IpPrefix p, boolean src) {
        if (!p.isIp6()) {
            long a = p.address().longValue();
            long size = 1L << (32 - p.length());
            return Expr.and(Expr.atom(Field.ETH_TYPE, IntervalSet.point(Field.ETH_IP4)),
                    Expr.atom(src ? Field.IP4_SRC : Field.IP4_DST, IntervalSet.range(a, a + size - 1)));
        }
        long hi = p.address().shiftRight(64).longValue();
        long lo = p.address().longValue();
        Field hf = src ? Field.IP6_SRC_HI : Field.IP6_DST_HI;
        Field lf = src ? Field.IP6_SRC_LO : Field.IP6_DST_LO;
        Expr fam = Expr.atom(Field.ETH_TYPE, IntervalSet.point(Field.ETH_IP6));
        int len = p.length();
        if (len <= 64) {
            long free = len == 0 ? -1L : (len == 64 ? 0 : (1L << (64 - len)) - 1);
            return len == 0 ? fam : Expr.and(fam, Expr.atom(hf, IntervalSet.range(hi, hi | free)));
        }
        long free = len == 128 ? 0 : (1L << (128 - len)) - 1;
        return Expr.and(fam, Expr.and(Expr.atom(hf, IntervalSet.point(hi)), Expr.atom(lf,
                IntervalSet.range(lo, lo | free))));
    }

    private static Expr directions(String dir, Expr s, Expr d) {
        switch (dir) {
            case "src": return s;
            case "dst": return d;
            case "src and dst": return Expr.and(s, d);
            default: return Expr.or(s, d);
        }
    }

    private Expr port(String dir, String proto) {
        long[] set = relation(Field.L4_SRC, PORTS);
        Expr e = portExpr(dir, proto, set);
        repeat = k -> portExpr(dir, proto, relation(Field.L4_SRC, PORTS));
        return e;
    }

    private static Expr portExpr(String dir, String proto, long[] set) {
        Expr guard = proto == null
                ? Expr.atom(Field.IP_PROTO, IntervalSet.union(IntervalSet.point(6), IntervalSet.point(17)))
                : Expr.atom(Field.IP_PROTO, IntervalSet.point(PROTOS.get(proto)));
        guard = Expr.and(guard, Expr.atom(Field.IP_OFFSET, IntervalSet.point(0)));
        return Expr.and(guard, directions(dir, Expr.atom(Field.L4_SRC, set), Expr.atom(Field.L4_DST, set)));
    }

    private Expr icmp() {
        return Expr.or(Expr.and(Expr.atom(Field.ETH_TYPE, IntervalSet.point(Field.ETH_IP4)),
                        Expr.atom(Field.IP_PROTO, IntervalSet.point(1))),
                Expr.and(Expr.atom(Field.ETH_TYPE, IntervalSet.point(Field.ETH_IP6)),
                        Expr.atom(Field.IP_PROTO, IntervalSet.point(58))));
    }

    private Expr proto(String t, int at) {
        if (t.equals("icmp")) {
            return icmp();
        }
        Integer p = PROTOS.get(t);
        if (p == null) {
            try {
                p = Integer.parseInt(t);
            } catch (NumberFormatException e) {
                p = -1;
            }
            if (p < 0 || p > 255) {
                throw error(at, "expected a protocol name or number 0..255, found '" + t + "'");
            }
        }
        return Expr.atom(Field.IP_PROTO, IntervalSet.point(p));
    }

    private Expr tcpOpt() {
        int at = i;
        String o = next("a TCP flag");
        Field f = TCP_OPTS.get(o);
        if (f == null) {
            throw error(at, "expected a TCP flag (fin, syn, rst, psh, ack, urg), found '" + o + "'");
        }
        return Expr.and(Expr.and(Expr.atom(Field.IP_PROTO, IntervalSet.point(6)),
                Expr.atom(Field.IP_OFFSET, IntervalSet.point(0))), Expr.atom(f, IntervalSet.point(1)));
    }

    private Expr ipPrimitive() {
        int at = i;
        String w = next("an ip field");
        switch (w) {
            case "proto":
                if (isRelation(peek())) {
                    return Expr.atom(Field.IP_PROTO, relation(Field.IP_PROTO, PROTOS));
                }
                return proto(next("a protocol"), i - 1);
            case "vers": {
                int vat = i;
                String v = next("4 or 6");
                if (!v.equals("4") && !v.equals("6")) {
                    throw error(vat, "expected 4 or 6 after 'ip vers', found '" + v + "'");
                }
                return Expr.atom(Field.ETH_TYPE, IntervalSet.point(v.equals("4") ? Field.ETH_IP4 : Field.ETH_IP6));
            }
            case "tos":
                return Expr.atom(Field.TOS, relation(Field.TOS, Map.of()));
            case "dscp": {
                long[] d = relation(Field.TOS, Map.of());
                long[] tos = IntervalSet.EMPTY;
                for (int k = 0; k < d.length; k += 2) {
                    if (d[k + 1] > 63) {
                        throw error(i - 1, "DSCP values are 0..63");
                    }
                    tos = IntervalSet.union(tos, IntervalSet.range(d[k] << 2, (d[k + 1] << 2) | 3));
                }
                return Expr.atom(Field.TOS, tos);
            }
            case "ttl": case "hlim":
                return Expr.atom(Field.TTL, relation(Field.TTL, Map.of()));
            case "frag":
                return Expr.or(Expr.atom(Field.IP_MF, IntervalSet.point(1)),
                        Expr.atom(Field.IP_OFFSET, IntervalSet.point(1)));
            case "unfrag":
                return Expr.and(Expr.atom(Field.IP_MF, IntervalSet.point(0)),
                        Expr.atom(Field.IP_OFFSET, IntervalSet.point(0)));
            case "mf":
                return Expr.atom(Field.IP_MF, IntervalSet.point(1));
            case "firstfrag":
                return Expr.atom(Field.IP_OFFSET, IntervalSet.point(0));
            default:
                throw error(at, "unknown ip field '" + w + "' (expected proto, vers, tos, dscp, ttl, frag, unfrag)");
        }
    }

    private static boolean isRelation(String t) {
        return t != null && (t.equals("<") || t.equals(">") || t.equals("<=") || t.equals(">=") || t.equals("!=")
                || t.equals("=") || t.equals("=="));
    }

    /** Reads {@code [REL] VALUE} or {@code LO-HI} into a set over f's domain. */
    private long[] relation(Field f, Map<String, Integer> names) {
        String rel = "=";
        String t = peek();
        if (t != null && (t.equals("<") || t.equals(">") || t.equals("<=") || t.equals(">=") || t.equals("!=")
                || t.equals("=") || t.equals("=="))) {
            rel = t;
            i++;
        }
        int at = i;
        String v = next("a value");
        int dash = v.indexOf('-', 1);
        if (rel.equals("=") && dash > 0 && !names.containsKey(v)) {
            long lo = value(v.substring(0, dash), f, names, at);
            long hi = value(v.substring(dash + 1), f, names, at);
            if (hi < lo) {
                throw error(at, "empty range '" + v + "'");
            }
            return IntervalSet.range(lo, hi);
        }
        long x = value(v, f, names, at);
        long max = f.max();
        switch (rel) {
            case "<": return x == 0 ? IntervalSet.EMPTY : IntervalSet.range(0, x - 1);
            case "<=": return IntervalSet.range(0, x);
            case ">": return x == max ? IntervalSet.EMPTY : IntervalSet.range(x + 1, max);
            case ">=": return IntervalSet.range(x, max);
            case "!=": return IntervalSet.complement(IntervalSet.point(x), f);
            default: return IntervalSet.point(x);
        }
    }

    private long value(String v, Field f, Map<String, Integer> names, int at) {
        Integer named = names.get(v);
        if (named != null) {
            return named;
        }
        try {
            long x = v.startsWith("0x") ? Long.parseLong(v.substring(2), 16) : Long.parseLong(v);
            if (x >= 0 && x <= f.max()) {
                return x;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw error(at, "expected a number 0.." + f.max() + (names.isEmpty() ? "" : " or a name") + ", found '" + v
                + "'");
    }

    /** Helper for tests and for elements that build patterns from addresses. */
    static BigInteger unsigned(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }
}
