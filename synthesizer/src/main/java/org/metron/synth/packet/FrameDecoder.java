package org.metron.synth.packet;

import org.metron.synth.hs.Field;
import org.metron.synth.packet.FrameCodec.Decoded;
import org.metron.synth.packet.FrameCodec.Layout;

import java.util.Arrays;

import static org.metron.synth.packet.FrameCodec.DEST_OPTIONS;
import static org.metron.synth.packet.FrameCodec.ETH_QINQ;
import static org.metron.synth.packet.FrameCodec.ETH_VLAN;
import static org.metron.synth.packet.FrameCodec.FRAGMENT;
import static org.metron.synth.packet.FrameCodec.HOP_BY_HOP;
import static org.metron.synth.packet.FrameCodec.ROUTING;

/**
 * An Ethernet frame read as the model's packet, as Click's CheckIPHeader (Metron's: IPv4 and IPv6) and a
 * switch read it: IPv6 extension headers are read through (the protocol is the upper layer's; a fragment header
 * gives the more-fragments and offset fields).
 */
final class FrameDecoder {
    private FrameDecoder() {
    }

    /**
     * The packet a frame is, with its {@link HeaderCheck}, and where its headers are.
     *
     * @throws OutsideModelException for frames the model has no reading of (a transport header cut short,
     *                               truncated IPv6 extension headers, a priority-tagged frame, an IP header at
     *                               byte 14 behind another EtherType, ...)
     */
    static Decoded decode(byte[] f) {
        if (f.length < 14) {
            throw new OutsideModelException("frame of " + f.length + " bytes");
        }
        long[] v = new long[Field.COUNT];
        v[Field.ETH_DST.ordinal()] = Bytes.get48(f, 0);
        v[Field.ETH_SRC.ordinal()] = Bytes.get48(f, 6);
        int type = Bytes.get16(f, 12);
        HeaderCheck atByte14 = clickCheck(f, 14);
        boolean tagged = type == ETH_VLAN || type == ETH_QINQ;
        if (tagged || type != Field.ETH_IP4 && type != Field.ETH_IP6) {
            if (atByte14 != HeaderCheck.UNPARSEABLE) {
                throw new OutsideModelException(String.format("IP header at byte 14 behind EtherType 0x%04x", type));
            }
            if (!tagged) {
                v[Field.ETH_TYPE.ordinal()] = type;
                return new Decoded(new Packet(v, Arrays.copyOfRange(f, 14, f.length), HeaderCheck.NOT_IP),
                        new Layout(-1, 0, f.length, -1, -1));
            }
            if (f.length < 18 || (Bytes.get16(f, 14) & 0xfff) == 0) {
                throw new OutsideModelException("priority-tagged or cut VLAN header");
            }
            v[Field.VLAN.ordinal()] = Bytes.get16(f, 14) & 0xfff;
            int inner = Bytes.get16(f, 16);
            v[Field.ETH_TYPE.ordinal()] = inner;
            // the tagged packet's fields, as a switch reads them (CheckIPHeader reads the tag at byte 14)
            HeaderCheck in18 = inner == Field.ETH_IP4 || inner == Field.ETH_IP6 ? clickCheck(f, 18)
                    : HeaderCheck.UNPARSEABLE;
            if (in18 == HeaderCheck.UNPARSEABLE) {
                return new Decoded(new Packet(v, new byte[0], HeaderCheck.NOT_IP), new Layout(-1, 0, f.length, -1, -1));
            }
            Decoded d = fields(f, 18, v);
            return new Decoded(new Packet(d.packet.v, d.packet.payload, HeaderCheck.NOT_IP), d.layout);
        }
        v[Field.ETH_TYPE.ordinal()] = type;
        if (atByte14 == HeaderCheck.UNPARSEABLE) {
            return new Decoded(new Packet(v, new byte[0], HeaderCheck.UNPARSEABLE), new Layout(-1, 0, f.length, -1, -1));
        }
        if ((f[14] >> 4 & 0xf) != (type == Field.ETH_IP4 ? 4 : 6)) {
            throw new OutsideModelException(String.format("IPv%d header behind EtherType 0x%04x", f[14] >> 4 & 0xf,
                    type));
        }
        Decoded d = fields(f, 14, v);
        return atByte14 == HeaderCheck.VALID ? d
                : new Decoded(new Packet(d.packet.v, d.packet.payload, atByte14), d.layout);
    }

    /** What Metron's CheckIPHeader makes of the bytes at {@code off} (VALID, BAD_CHECKSUM or UNPARSEABLE). */
    static HeaderCheck clickCheck(byte[] f, int off) {
        int len = f.length - off;
        if (len < 20) {
            return HeaderCheck.UNPARSEABLE;
        }
        int ver = f[off] >> 4 & 0xf;
        if (ver == 4) {
            int hl = (f[off] & 0xf) * 4;
            int tot = Bytes.get16(f, off + 2);
            if (hl < 20 || tot < hl || tot > len) {
                return HeaderCheck.UNPARSEABLE;
            }
            // VALID if the checksum verifies: the header's ones' complement sum is all ones
            return Checksum.of(f, off, hl, 0) == 0 ? HeaderCheck.VALID : HeaderCheck.BAD_CHECKSUM;
        }
        if (ver == 6) {
            return len < 40 || 40 + Bytes.get16(f, off + 4) > len ? HeaderCheck.UNPARSEABLE : HeaderCheck.VALID;
        }
        return HeaderCheck.UNPARSEABLE;
    }

    /** Reads the IP header at {@code ip} (which CheckIPHeader accepts, maybe but for its checksum). */
    private static Decoded fields(byte[] f, int ip, long[] v) {
        int ver = f[ip] >> 4 & 0xf;
        int proto;
        int next;
        int end;
        boolean first;
        if (ver == 4) {
            v[Field.ETH_TYPE.ordinal()] = Field.ETH_IP4;
            int hl = (f[ip] & 0xf) * 4;
            end = ip + Bytes.get16(f, ip + 2);
            v[Field.TOS.ordinal()] = f[ip + 1] & 0xff;
            v[Field.TTL.ordinal()] = f[ip + 8] & 0xff;
            proto = f[ip + 9] & 0xff;
            int frag = Bytes.get16(f, ip + 6);
            v[Field.IP_MF.ordinal()] = (frag & 0x2000) != 0 ? 1 : 0;
            first = (frag & 0x1fff) == 0;
            v[Field.IP4_SRC.ordinal()] = Bytes.get32(f, ip + 12);
            v[Field.IP4_DST.ordinal()] = Bytes.get32(f, ip + 16);
            next = ip + hl;
        } else {
            v[Field.ETH_TYPE.ordinal()] = Field.ETH_IP6;
            end = ip + 40 + Bytes.get16(f, ip + 4);
            v[Field.TOS.ordinal()] = Bytes.get16(f, ip) >> 4 & 0xff;
            v[Field.TTL.ordinal()] = f[ip + 7] & 0xff;
            v[Field.IP6_SRC_HI.ordinal()] = Bytes.get64(f, ip + 8);
            v[Field.IP6_SRC_LO.ordinal()] = Bytes.get64(f, ip + 16);
            v[Field.IP6_DST_HI.ordinal()] = Bytes.get64(f, ip + 24);
            v[Field.IP6_DST_LO.ordinal()] = Bytes.get64(f, ip + 32);
            proto = f[ip + 6] & 0xff;
            next = ip + 40;
            first = true;
            while (proto == HOP_BY_HOP || proto == ROUTING || proto == DEST_OPTIONS || proto == FRAGMENT) {
                if (next + 8 > end) {
                    throw new OutsideModelException("IPv6 extension header cut short");
                }
                if (proto == FRAGMENT) {
                    int w = Bytes.get16(f, next + 2);
                    first = (w & 0xfff8) == 0;
                    v[Field.IP_MF.ordinal()] = w & 1;
                    proto = f[next] & 0xff;
                    next += 8;
                } else {
                    int len = ((f[next + 1] & 0xff) + 1) * 8;
                    proto = f[next] & 0xff;
                    next += len;
                }
            }
        }
        v[Field.IP_PROTO.ordinal()] = proto;
        v[Field.IP_OFFSET.ordinal()] = first ? 0 : 1;
        int l4 = -1;
        int data = next;
        boolean icmp = proto == (ver == 6 ? 58 : 1);
        if (first && (proto == 6 || proto == 17 || icmp)) {
            int need = proto == 6 ? 20 : 8;
            if (next + need > end) {
                throw new OutsideModelException("transport header cut short");
            }
            l4 = next;
            if (proto == 6) {
                v[Field.L4_SRC.ordinal()] = Bytes.get16(f, l4);
                v[Field.L4_DST.ordinal()] = Bytes.get16(f, l4 + 2);
                int flags = f[l4 + 13] & 0x3f;
                for (Field fd : Field.values()) {
                    if (fd.tcpFlagBit() != 0) {
                        v[fd.ordinal()] = (flags & fd.tcpFlagBit()) != 0 ? 1 : 0;
                    }
                }
                data = l4 + Math.max(20, (f[l4 + 12] >> 4 & 0xf) * 4);
            } else if (proto == 17) {
                v[Field.L4_SRC.ordinal()] = Bytes.get16(f, l4);
                v[Field.L4_DST.ordinal()] = Bytes.get16(f, l4 + 2);
                data = l4 + 8;
            } else {
                v[Field.ICMP_TYPE.ordinal()] = f[l4] & 0xff;
                data = l4 + 8;
            }
        }
        byte[] payload = Arrays.copyOfRange(f, Math.min(data, end), end);
        boolean ext = ver == 6 && (f[ip + 6] & 0xff) != proto;
        return new Decoded(new Packet(v, payload, HeaderCheck.VALID), new Layout(ip, ver, end, l4, proto, ext));
    }
}
