package org.metron.synth;

/**
 * Header fields as a target device sees them: what {@link TargetProfile} says a device can match or write, and
 * what {@link RuleMatch} and {@link HeaderWrite} carry. IPv4 and IPv6 addresses are one field each
 * ({@code IP_SRC}, {@code IP_DST}); the address family follows from {@code ETH_TYPE}.
 */
public enum MatchField {
    ETH_SRC, ETH_DST, VLAN_ID, ETH_TYPE,
    IP_PROTO, IP_SRC, IP_DST, IP_TOS, IP_TTL, IP_FRAG,
    L4_SRC, L4_DST, TCP_FLAGS, ICMP_TYPE
}
