package org.metron.synth.packet;

import org.metron.synth.hs.Field;

/**
 * Ethernet frames and the model's packets, both ways. {@link #encode} writes a packet as a frame (with the
 * odd shapes of {@link Shape}: IPv4 options, IPv6 extension headers, VLAN tags, broken headers and checksums);
 * {@link #decode} reads a frame as Click's CheckIPHeader (Metron's: IPv4 and IPv6) and a switch read it
 * ({@link FrameRewrite} writes what a chain changed back into it). The writing is {@link FrameEncoder}'s, the
 * reading {@link FrameDecoder}'s; this class holds what both share: the shapes, layouts and header constants.
 * <p>
 * A packet's payload is what follows its transport header (TCP data offset, UDP and ICMP 8 bytes) in first
 * fragments of TCP, UDP and ICMP, and what follows the IP header (and IPv6 extension headers) otherwise.
 * IPv6 extension headers (hop-by-hop, routing, destination options, fragment) are read through: the protocol
 * is the upper layer's; a fragment header gives the more-fragments and offset fields.
 */
public final class FrameCodec {
    public static final int ETH_VLAN = 0x8100;
    static final int ETH_QINQ = 0x88a8;
    static final int HOP_BY_HOP = 0;
    static final int ROUTING = 43;
    static final int FRAGMENT = 44;
    static final int DEST_OPTIONS = 60;

    private FrameCodec() {
    }

    /** How a frame's IP header is broken (an {@link HeaderCheck#UNPARSEABLE} frame). */
    public enum Break {
        NONE,
        /** The frame ends inside the IP header. */
        CUT_HEADER,
        /** The IPv4 total length / IPv6 payload length claims 64 bytes more than the frame has. */
        LONG_LENGTH,
        /** IPv4 header length 4 words (less than the 5 of a header without options). */
        SHORT_IHL
    }

    /** The odd parts of a frame beyond its packet's fields. Mutable, filled by the generator. */
    public static final class Shape {
        /** Bytes of IPv4 options (NOPs then EOL), a multiple of 4 up to 40. */
        public int ipOptions;
        public boolean dontFragment;
        /** IPv6 extension headers before the upper layer: hop-by-hop, then destination options (0..2). */
        public int ipv6ExtHeaders;
        /** IPv4 identification / IPv6 fragment identification. */
        public int ipId;
        /** Fragment offset in 8-byte units when the packet's offset bit is set (1..8191). */
        public int fragmentOffset = 185;
        public boolean badIpChecksum;
        public boolean badL4Checksum;
        /** IPv4 UDP without a checksum (0). */
        public boolean udpNoChecksum;
        public Break broken = Break.NONE;
        /** Bytes written right before the packet's payload (the frame's identity in the checkers). */
        public byte[] marker = new byte[0];
    }

    /** Where a decoded frame's headers are. */
    public static final class Layout {
        /** Offset of the IP header (14, or 18 behind a VLAN tag); -1 if there is none the model reads. */
        public final int ip;
        /** 4 or 6; 0 without an IP header. */
        public final int version;
        /** End of the IP datagram (total length / 40 + payload length); bytes after it are padding. */
        public final int end;
        /** Offset of the transport header, -1 in non-first fragments and protocols without one. */
        public final int l4;
        /** Upper-layer protocol (after IPv6 extension headers). */
        public final int proto;
        /** True for an IPv6 packet with extension headers (hop-by-hop, routing, destination options, fragment). */
        public final boolean ipv6Extensions;

        Layout(int ip, int version, int end, int l4, int proto) {
            this(ip, version, end, l4, proto, false);
        }

        Layout(int ip, int version, int end, int l4, int proto, boolean ipv6Extensions) {
            this.ip = ip;
            this.version = version;
            this.end = end;
            this.l4 = l4;
            this.proto = proto;
            this.ipv6Extensions = ipv6Extensions;
        }

        /**
         * Offset of the TCP/UDP checksum that rewriting updates, or -1: no transport header, one too short for it
         * (Click updates TCP's only from 18 bytes on), or a UDP datagram without checksum (0 stays 0).
         */
        int l4Checksum(byte[] f) {
            if (l4 < 0) {
                return -1;
            }
            if (proto == 6 && end - l4 >= 18) {
                return l4 + 16;
            }
            if (proto == 17 && end - l4 >= 8 && Bytes.get16(f, l4 + 6) != 0) {
                return l4 + 6;
            }
            return -1;
        }
    }

    /** A frame as the model reads it. */
    public static final class Decoded {
        public final Packet packet;
        public final Layout layout;

        public Decoded(Packet packet, Layout layout) {
            this.packet = packet;
            this.layout = layout;
        }
    }

    /** The frame of a packet in a shape; the packet must be well-formed for its {@link HeaderCheck}. */
    public static byte[] encode(Packet p, Shape s) {
        return FrameEncoder.encode(p, s);
    }

    /**
     * The packet a frame is, with its {@link HeaderCheck}, and where its headers are.
     *
     * @throws OutsideModelException for frames the model has no reading of (a transport header cut short,
     *                               truncated IPv6 extension headers, a priority-tagged frame, an IP header at
     *                               byte 14 behind another EtherType, ...)
     */
    public static Decoded decode(byte[] f) {
        return FrameDecoder.decode(f);
    }
}
