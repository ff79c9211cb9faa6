package org.metron.synth.packet;

/**
 * What Click's CheckIPHeader (reading the frame from byte 14) and a switch's parser make of a frame. Packets of
 * the synthesizer's model are {@link #VALID}; the other kinds are frames a chain meets on a real wire, each with
 * the field values a switch reads from it, so the checkers can hold the offload to Click's verdict on them.
 */
public enum HeaderCheck {
    /** A well-formed IPv4 or IPv6 header right after an untagged Ethernet header. */
    VALID,
    /**
     * An IPv4 header with a wrong header checksum: CheckIPHeader drops it; switches do not verify the checksum
     * and read its fields as usual (the packet's fields are those fields). docs/contracts.md#offload-exceptions.
     */
    BAD_CHECKSUM,
    /**
     * An IP EtherType whose header is cut short or has a bad version, header length or total length:
     * CheckIPHeader drops it; Open vSwitch parses no IP field from it and reads them all as 0 (so do the
     * packet's IP fields).
     */
    UNPARSEABLE,
    /**
     * No IP header at byte 14: another EtherType (ARP, LLDP, ...) or a VLAN-tagged frame. CheckIPHeader drops
     * it. A tagged frame's packet has the tag's id in VLAN and the tagged frame's EtherType and IP fields, as a
     * switch reads them; other frames have their EtherType and every IP field 0.
     */
    NOT_IP
}
