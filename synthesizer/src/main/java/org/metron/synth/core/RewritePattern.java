package org.metron.synth.core;

import org.metron.synth.IpPrefix;

import java.math.BigInteger;

/**
 * One rewrite pattern {@code SADDR SPORT DADDR DPORT}: each address is a host address or null ('-', keep),
 * SPORT/DPORT a value, a range {@code lo-hi} (a free port is allocated per flow) or '-' (keep). Immutable.
 */
public final class RewritePattern {
    /** Port kept as is. */
    public static final int[] KEEP = null;

    public final IpPrefix saddr;
    public final int[] sport;
    public final IpPrefix daddr;
    public final int[] dport;
    /** The pattern's text, also its identity (equals/hashCode): computed once, compared per packet. */
    private final String text;

    public RewritePattern(IpPrefix saddr, int[] sport, IpPrefix daddr, int[] dport) {
        this.saddr = saddr;
        this.sport = sport;
        this.daddr = daddr;
        this.dport = dport;
        this.text = (saddr == null ? "-" : saddr.addressString()) + " " + portText(sport) + " "
                + (daddr == null ? "-" : daddr.addressString()) + " " + portText(dport);
    }

    /** The IP family the pattern's addresses belong to: 4, 6, or 0 if it rewrites no address. */
    public int family() {
        IpPrefix a = saddr != null ? saddr : daddr;
        return a == null ? 0 : a.isIp6() ? 6 : 4;
    }

    /** True if the pattern rewrites ports (so it only applies to TCP/UDP). */
    public boolean touchesPorts() {
        return sport != null || dport != null;
    }

    /** This pattern followed by {@code later}: later's non-keep fields win. */
    public RewritePattern then(RewritePattern later) {
        return new RewritePattern(later.saddr != null ? later.saddr : saddr, later.sport != null ? later.sport : sport,
                later.daddr != null ? later.daddr : daddr, later.dport != null ? later.dport : dport);
    }

    /** Parses the four fields (already split on whitespace). */
    public static RewritePattern parse(String sa, String sp, String da, String dp) {
        return new RewritePattern(addr(sa), port(sp), addr(da), port(dp));
    }

    private static IpPrefix addr(String t) {
        if (t.equals("-")) {
            return null;
        }
        IpPrefix p = IpPrefix.parse(t);
        if (p.length() != (p.isIp6() ? 128 : 32)) {
            throw new IllegalArgumentException("rewrite address '" + t + "' must be a host address");
        }
        return p;
    }

    private static int[] port(String t) {
        if (t.equals("-")) {
            return null;
        }
        int dash = t.indexOf('-');
        try {
            int lo = Integer.parseInt(dash < 0 ? t : t.substring(0, dash));
            int hi = dash < 0 ? lo : Integer.parseInt(t.substring(dash + 1));
            if (lo < 0 || hi > 65535 || hi < lo) {
                throw new IllegalArgumentException("port '" + t + "' out of range 0..65535");
            }
            return new int[] {lo, hi};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + t + "' is not a port, port range or '-'");
        }
    }

    /** Address value as unsigned bits (low 64 bits for IPv6 low half, etc. are taken by callers). */
    public static BigInteger bits(IpPrefix p) {
        return p.address();
    }

    @Override
    public String toString() {
        return text;
    }

    private static String portText(int[] p) {
        return p == null ? "-" : p[0] == p[1] ? Integer.toString(p[0]) : p[0] + "-" + p[1];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RewritePattern && text.equals(((RewritePattern) o).text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }
}
