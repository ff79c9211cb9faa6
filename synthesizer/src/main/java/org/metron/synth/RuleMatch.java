package org.metron.synth;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The match part of an {@link OffloadRule}: a conjunction of optional per-field matches (absent = wildcard).
 * Only fields the rule's {@link TargetProfile} can match are ever set. Immutable; build with {@link #builder()}.
 */
public final class RuleMatch {
    /**
     * {@link #vlan()} of a rule that matches frames without a VLAN tag only (ONOS's {@code VlanId.UNTAGGED}, so
     * {@code VlanId.vlanId((short) UNTAGGED)} is {@code VlanId.NONE}: OpenFlow's OFPVID_NONE).
     */
    public static final int UNTAGGED = 0xffff;

    private final Integer ethType;
    private final Integer vlan;
    private final Integer ipProto;
    private final IpPrefix ipSrc;
    private final IpPrefix ipDst;
    private final RangeMatch l4Src;
    private final RangeMatch l4Dst;
    private final BitMatch tcpFlags;
    private final RangeMatch tos;
    private final RangeMatch ttl;
    private final Boolean fragment;
    private final RangeMatch icmpType;
    private final BitMatch l4SrcBits;

    private RuleMatch(Builder b) {
        l4SrcBits = b.l4SrcBits;
        ethType = b.ethType;
        vlan = b.vlan;
        ipProto = b.ipProto;
        ipSrc = b.ipSrc;
        ipDst = b.ipDst;
        l4Src = b.l4Src;
        l4Dst = b.l4Dst;
        tcpFlags = b.tcpFlags;
        tos = b.tos;
        ttl = b.ttl;
        fragment = b.fragment;
        icmpType = b.icmpType;
    }

    /** A new builder with every field wildcarded. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this match's fields (to derive a narrower match, e.g. a class slice's). */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.ethType = ethType;
        b.vlan = vlan;
        b.ipProto = ipProto;
        b.ipSrc = ipSrc;
        b.ipDst = ipDst;
        b.l4Src = l4Src;
        b.l4Dst = l4Dst;
        b.tcpFlags = tcpFlags;
        b.tos = tos;
        b.ttl = ttl;
        b.fragment = fragment;
        b.l4SrcBits = l4SrcBits;
        b.icmpType = icmpType;
        return b;
    }

    /** Ethernet type (0x0800 IPv4, 0x86dd IPv6). */
    public Optional<Integer> ethType() {
        return Optional.ofNullable(ethType);
    }

    /** VLAN id (1..4095), or {@link #UNTAGGED}. */
    public Optional<Integer> vlan() {
        return Optional.ofNullable(vlan);
    }

    /** IP protocol / IPv6 next header. */
    public Optional<Integer> ipProto() {
        return Optional.ofNullable(ipProto);
    }

    /** Source prefix; its family agrees with {@link #ethType()}. */
    public Optional<IpPrefix> ipSrc() {
        return Optional.ofNullable(ipSrc);
    }

    /** Destination prefix; its family agrees with {@link #ethType()}. */
    public Optional<IpPrefix> ipDst() {
        return Optional.ofNullable(ipDst);
    }

    /** TCP/UDP source port. */
    public Optional<RangeMatch> l4Src() {
        return Optional.ofNullable(l4Src);
    }

    /**
     * Bits of the TCP/UDP source port ({@code (port & mask) == value}), on top of {@link #l4Src()}. The synthesizer
     * never emits it: scaling adds it when it divides a class between cores by source-port bits
     * (docs/scaling.md#class-split), and the equivalence checker reads it.
     */
    public Optional<BitMatch> l4SrcBits() {
        return Optional.ofNullable(l4SrcBits);
    }

    /** TCP/UDP destination port. */
    public Optional<RangeMatch> l4Dst() {
        return Optional.ofNullable(l4Dst);
    }

    /** TCP flags (value/mask over the 8 flag bits). */
    public Optional<BitMatch> tcpFlags() {
        return Optional.ofNullable(tcpFlags);
    }

    /** IPv4 TOS / IPv6 traffic class byte. */
    public Optional<RangeMatch> tos() {
        return Optional.ofNullable(tos);
    }

    /** IPv4 TTL / IPv6 hop limit. */
    public Optional<RangeMatch> ttl() {
        return Optional.ofNullable(ttl);
    }

    /**
     * Fragment offset test: true = only non-first fragments (offset &ne; 0, no L4 header), false = only packets
     * with offset 0 (unfragmented or first fragments, which carry the L4 header).
     */
    public Optional<Boolean> fragment() {
        return Optional.ofNullable(fragment);
    }

    /** ICMP / ICMPv6 type. */
    public Optional<RangeMatch> icmpType() {
        return Optional.ofNullable(icmpType);
    }

    /** Fields this match constrains. */
    public List<MatchField> fields() {
        List<MatchField> out = new ArrayList<>();
        if (ethType != null) {
            out.add(MatchField.ETH_TYPE);
        }
        if (vlan != null) {
            out.add(MatchField.VLAN_ID);
        }
        if (ipProto != null) {
            out.add(MatchField.IP_PROTO);
        }
        if (ipSrc != null) {
            out.add(MatchField.IP_SRC);
        }
        if (ipDst != null) {
            out.add(MatchField.IP_DST);
        }
        if (l4Src != null || l4SrcBits != null) {
            out.add(MatchField.L4_SRC);
        }
        if (l4Dst != null) {
            out.add(MatchField.L4_DST);
        }
        if (tcpFlags != null) {
            out.add(MatchField.TCP_FLAGS);
        }
        if (tos != null) {
            out.add(MatchField.IP_TOS);
        }
        if (ttl != null) {
            out.add(MatchField.IP_TTL);
        }
        if (fragment != null) {
            out.add(MatchField.IP_FRAG);
        }
        if (icmpType != null) {
            out.add(MatchField.ICMP_TYPE);
        }
        return out;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        append(sb, "eth_type", ethType == null ? null : String.format("0x%04x", ethType));
        append(sb, "vlan", vlan);
        append(sb, "ip_proto", ipProto);
        append(sb, "ip_src", ipSrc);
        append(sb, "ip_dst", ipDst);
        append(sb, "l4_src", l4Src);
        append(sb, "l4_src_bits", l4SrcBits);
        append(sb, "l4_dst", l4Dst);
        append(sb, "tcp_flags", tcpFlags);
        append(sb, "tos", tos);
        append(sb, "ttl", ttl);
        append(sb, "frag", fragment);
        append(sb, "icmp_type", icmpType);
        return sb.length() == 0 ? "*" : sb.toString();
    }

    private static void append(StringBuilder sb, String name, Object v) {
        if (v != null) {
            sb.append(sb.length() == 0 ? "" : ",").append(name).append('=').append(v);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RuleMatch)) {
            return false;
        }
        RuleMatch m = (RuleMatch) o;
        return Objects.equals(ethType, m.ethType) && Objects.equals(vlan, m.vlan)
                && Objects.equals(ipProto, m.ipProto) && Objects.equals(ipSrc, m.ipSrc)
                && Objects.equals(ipDst, m.ipDst) && Objects.equals(l4Src, m.l4Src)
                && Objects.equals(l4Dst, m.l4Dst) && Objects.equals(tcpFlags, m.tcpFlags)
                && Objects.equals(tos, m.tos) && Objects.equals(ttl, m.ttl)
                && Objects.equals(fragment, m.fragment) && Objects.equals(icmpType, m.icmpType)
                && Objects.equals(l4SrcBits, m.l4SrcBits);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ethType, vlan, ipProto, ipSrc, ipDst, l4Src, l4Dst, tcpFlags, tos, ttl, fragment,
                icmpType, l4SrcBits);
    }

    /** Builder for {@link RuleMatch}. */
    public static final class Builder {
        private Integer ethType;
        private Integer vlan;
        private Integer ipProto;
        private IpPrefix ipSrc;
        private IpPrefix ipDst;
        private RangeMatch l4Src;
        private RangeMatch l4Dst;
        private BitMatch tcpFlags;
        private RangeMatch tos;
        private RangeMatch ttl;
        private Boolean fragment;
        private BitMatch l4SrcBits;
        private RangeMatch icmpType;

        private Builder() {
        }

        /** A new builder with this builder's fields. */
        public Builder copy() {
            return new RuleMatch(this).toBuilder();
        }

        public Builder ethType(int v) {
            ethType = v;
            return this;
        }

        public Builder vlan(int v) {
            vlan = v;
            return this;
        }

        public Builder ipProto(int v) {
            ipProto = v;
            return this;
        }

        public Builder ipSrc(IpPrefix v) {
            ipSrc = v;
            return this;
        }

        public Builder ipDst(IpPrefix v) {
            ipDst = v;
            return this;
        }

        public Builder l4Src(RangeMatch v) {
            l4Src = v;
            return this;
        }

        /** Source-port bits (class slices, see {@link RuleMatch#l4SrcBits()}). */
        public Builder l4SrcBits(BitMatch v) {
            l4SrcBits = v;
            return this;
        }

        public Builder l4Dst(RangeMatch v) {
            l4Dst = v;
            return this;
        }

        public Builder tcpFlags(BitMatch v) {
            tcpFlags = v;
            return this;
        }

        public Builder tos(RangeMatch v) {
            tos = v;
            return this;
        }

        public Builder ttl(RangeMatch v) {
            ttl = v;
            return this;
        }

        public Builder fragment(boolean v) {
            fragment = v;
            return this;
        }

        public Builder icmpType(RangeMatch v) {
            icmpType = v;
            return this;
        }

        /** Builds the match. */
        public RuleMatch build() {
            return new RuleMatch(this);
        }
    }
}
