package org.metron.synth.hs;

import org.metron.synth.MatchField;

/**
 * Header fields of the synthesizer's header space. Every field fits an unsigned 64-bit value so one interval
 * set type serves them all; IPv6 addresses are split into high and low halves (a prefix is then a conjunction
 * of an exact high half and a range on the low half, or a range on the high half).
 * <p>
 * Fields that do not exist in a packet (ports of ICMP, IPv4 addresses of an IPv6 packet) read as 0; every
 * pattern that tests them also tests the protocol/family, so that value never decides a match.
 */
public enum Field {
    ETH_SRC(48, MatchField.ETH_SRC),
    ETH_DST(48, MatchField.ETH_DST),
    VLAN(12, MatchField.VLAN_ID),
    ETH_TYPE(16, MatchField.ETH_TYPE),
    IP_PROTO(8, MatchField.IP_PROTO),
    IP4_SRC(32, MatchField.IP_SRC),
    IP4_DST(32, MatchField.IP_DST),
    IP6_SRC_HI(64, MatchField.IP_SRC),
    IP6_SRC_LO(64, MatchField.IP_SRC),
    IP6_DST_HI(64, MatchField.IP_DST),
    IP6_DST_LO(64, MatchField.IP_DST),
    TOS(8, MatchField.IP_TOS),
    TTL(8, MatchField.IP_TTL),
    /** More-fragments bit. */
    IP_MF(1, MatchField.IP_FRAG),
    /** 1 if the fragment offset is non-zero (a non-first fragment: no transport header). */
    IP_OFFSET(1, MatchField.IP_FRAG),
    L4_SRC(16, MatchField.L4_SRC),
    L4_DST(16, MatchField.L4_DST),
    TCP_FIN(1, MatchField.TCP_FLAGS),
    TCP_SYN(1, MatchField.TCP_FLAGS),
    TCP_RST(1, MatchField.TCP_FLAGS),
    TCP_PSH(1, MatchField.TCP_FLAGS),
    TCP_ACK(1, MatchField.TCP_FLAGS),
    TCP_URG(1, MatchField.TCP_FLAGS),
    ICMP_TYPE(8, MatchField.ICMP_TYPE);

    /** Number of fields. */
    public static final int COUNT = values().length;
    private static final Field[] VALUES = values();

    public static final long ETH_IP4 = 0x0800;
    public static final long ETH_IP6 = 0x86dd;

    private final int width;
    private final MatchField matchField;

    Field(int width, MatchField matchField) {
        this.width = width;
        this.matchField = matchField;
    }

    /** Field by ordinal. */
    public static Field of(int ordinal) {
        return VALUES[ordinal];
    }

    public int width() {
        return width;
    }

    /** Largest value (unsigned; -1L for 64-bit fields). */
    public long max() {
        return width == 64 ? -1L : (1L << width) - 1;
    }

    /** The device-level field this one maps to. */
    public MatchField matchField() {
        return matchField;
    }

    /** TCP flag bit (FIN=0x01 ... URG=0x20) for TCP_* fields, else 0. */
    public int tcpFlagBit() {
        switch (this) {
            case TCP_FIN: return 0x01;
            case TCP_SYN: return 0x02;
            case TCP_RST: return 0x04;
            case TCP_PSH: return 0x08;
            case TCP_ACK: return 0x10;
            case TCP_URG: return 0x20;
            default: return 0;
        }
    }
}
