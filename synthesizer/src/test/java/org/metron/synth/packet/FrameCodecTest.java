package org.metron.synth.packet;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.check.FrameGenerator;
import org.metron.synth.hs.Field;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/**
 * Frames both ways: what CheckIPHeader and a switch make of every kind the real-data-plane checker sends, the
 * generator's packets read back from their frames, and rewrites whose checksums still verify.
 */
public class FrameCodecTest {
    private static ChainSpec chain(String name) throws Exception {
        Path p = Paths.get(System.getProperty("basedir", "."), "corpus", name + ".json");
        return ChainSpec.fromJson(new String(Files.readAllBytes(p), StandardCharsets.UTF_8));
    }

    @Test
    public void everyKindOfFrameReadsAsCheckIpHeaderAndASwitchSeeIt() throws Exception {
        FrameGenerator gen = new FrameGenerator(chain("fw1000-napt-lb"), 3);
        Map<FrameGenerator.Kind, Integer> seen = new EnumMap<>(FrameGenerator.Kind.class);
        for (int i = 0; i < 4000; i++) {
            FrameGenerator.Frame f = gen.next();
            Object[] who = FrameGenerator.identify(f.bytes);
            FrameGenerator.Kind kind = who == null ? FrameGenerator.unmarkedKind(f.bytes) : (FrameGenerator.Kind) who[1];
            assertEquals(f.kind, kind);
            if (who != null) {
                assertEquals(f.id, (int) (Integer) who[0]);
            }
            FrameCodec.Decoded d = FrameCodec.decode(f.bytes);
            Packet p = d.packet;
            seen.merge(f.kind, 1, Integer::sum);
            switch (f.kind) {
                case VLAN_TAGGED:
                case ARP:
                case OTHER_ETHERTYPE:
                    assertEquals(HeaderCheck.NOT_IP, p.check);
                    assertEquals(f.kind == FrameGenerator.Kind.VLAN_TAGGED, p.get(Field.VLAN) != 0);
                    break;
                case CUT_IP_HEADER:
                case LONG_IP_LENGTH:
                case SHORT_IP_HEADER_LENGTH:
                    assertEquals(HeaderCheck.UNPARSEABLE, p.check);
                    assertEquals(0, p.get(Field.IP_PROTO));
                    break;
                case BAD_IP_CHECKSUM:
                    assertEquals(HeaderCheck.BAD_CHECKSUM, p.check);
                    break;
                case FIRST_FRAGMENT:
                    assertEquals(1, p.get(Field.IP_MF));
                    assertEquals(0, p.get(Field.IP_OFFSET));
                    break;
                case MIDDLE_FRAGMENT:
                case LAST_FRAGMENT:
                    assertEquals(f.kind == FrameGenerator.Kind.MIDDLE_FRAGMENT ? 1 : 0, p.get(Field.IP_MF));
                    assertEquals(1, p.get(Field.IP_OFFSET));
                    assertEquals("no ports in a later fragment", 0, p.get(Field.L4_SRC) | p.get(Field.L4_DST));
                    break;
                case IPV6_EXTENSION_HEADERS:
                    assertTrue(p.isIp6() && d.layout.ipv6Extensions);
                    assertTrue("the upper layer's protocol", p.get(Field.IP_PROTO) != 0 && p.get(Field.IP_PROTO) != 60);
                    break;
                case IP_OPTIONS:
                    assertTrue(d.layout.l4 < 0 || d.layout.l4 > d.layout.ip + 20);
                    break;
                default:
                    if (f.kind != FrameGenerator.Kind.PLAIN) {
                        assertEquals(f.kind.toString(), HeaderCheck.VALID, p.check);
                    }
            }
            if (p.check == HeaderCheck.VALID) {
                // the payload starts with the marker; the packet's fields survive the round trip
                assertEquals(FrameGenerator.MAGIC[0], p.payload[0]);
                FrameCodec.Shape s = new FrameCodec.Shape();
                byte[] again = FrameCodec.encode(p, s);
                assertEquals(p, FrameCodec.decode(again).packet);
                // and a chain that changes nothing changes no byte
                assertArrayEquals(f.bytes, FrameRewrite.rewrite(f.bytes, d, p, null));
            }
        }
        // every kind but the replies (made from captured forward frames)
        assertEquals(List.of(FrameGenerator.Kind.values()).size() - 2, seen.size());
    }

    @Test
    public void aMagicSpelledByItsAddressesDoesNotMakeAFrameReadAsAnother() throws Exception {
        // fw1000's 10^6-frame trace had frame 136286 with destination MAC ef:a3:4e:9d:3c:a5 and source MAC
        // 6d:51:...: the magic across the two, so it read as another frame and its arrival as unidentified
        FrameGenerator gen = new FrameGenerator(chain("fw1000"), 1);
        for (int i = 0; i < 100; i++) {
            FrameGenerator.Frame f = gen.next();
            byte[] b = f.bytes.clone();
            System.arraycopy(FrameGenerator.MAGIC, 0, b, 5, 3);
            Object[] who = FrameGenerator.identify(b);
            if (f.kind != FrameGenerator.Kind.CUT_IP_HEADER) {
                assertEquals(f.id, (int) (Integer) who[0]);
                assertEquals(f.kind, who[1]);
            }
        }
        // and a whole long trace: every frame reads as itself
        gen = new FrameGenerator(chain("fw1000"), 1);
        for (int i = 0; i < 1_000_000; i++) {
            FrameGenerator.Frame f = gen.next();
            Object[] who = FrameGenerator.identify(f.bytes);
            if (who != null || f.kind != FrameGenerator.Kind.CUT_IP_HEADER) {
                assertEquals(f.id, (int) (Integer) who[0]);
            }
        }
    }

    @Test
    public void rewritingAddressesPortsAndTtlKeepsEveryChecksumRight() throws Exception {
        FrameGenerator gen = new FrameGenerator(chain("fw1000"), 5);
        int rewritten = 0;
        for (int i = 0; i < 3000; i++) {
            FrameGenerator.Frame f = gen.next();
            FrameCodec.Decoded d = FrameCodec.decode(f.bytes);
            Packet in = d.packet;
            if (in.check != HeaderCheck.VALID || f.kind == FrameGenerator.Kind.BAD_L4_CHECKSUM
                    || in.get(Field.IP_OFFSET) != 0 || in.get(Field.IP_MF) != 0) {
                continue;  // a fragment's transport checksum covers bytes it does not carry
            }
            Packet out = in.copy();
            out.set(Field.TTL, Math.max(0, in.get(Field.TTL) - 1));
            out.set(Field.ETH_SRC, 0x020000000101L);
            if (in.isIp6()) {
                out.set(Field.IP6_SRC_LO, in.get(Field.IP6_SRC_LO) ^ 0x1234_5678_9abcL);
            } else {
                out.set(Field.IP4_SRC, 0xcb007101L);
                out.set(Field.TOS, in.get(Field.TOS) ^ 0x14);
            }
            if (d.layout.l4 >= 0 && (d.layout.proto == 6 || d.layout.proto == 17)) {
                out.set(Field.L4_SRC, 1024 + i);
                out.set(Field.L4_DST, 8080);
            }
            byte[] o = FrameRewrite.rewrite(f.bytes, d, out, 0x020000000002L);
            FrameCodec.Decoded od = FrameCodec.decode(o);
            assertEquals(HeaderCheck.VALID, od.packet.check);
            long[] want = out.v.clone();
            want[Field.ETH_DST.ordinal()] = 0x020000000002L;
            assertArrayEquals(want, od.packet.v);
            FrameCodec.Layout l = od.layout;
            boolean udpNone = l.proto == 17 && l.l4 >= 0 && Bytes.get16(o, l.l4 + 6) == 0;
            if (l.l4 >= 0 && (l.proto == 6 || l.proto == 17) && !udpNone) {
                int sum = transportSum(o, l);
                assertTrue(String.format("transport checksum of %s: %04x", PacketText.format(out), sum),
                        sum == 0 || sum == 0xffff);
                rewritten++;
            }
        }
        assertTrue("rewrote " + rewritten, rewritten > 500);
        assertNotNull(FrameGenerator.MAGIC);
    }

    /** The ones' complement sum of pseudo-header and segment, folded: all ones when the checksum is right. */
    private static int transportSum(byte[] f, FrameCodec.Layout l) {
        long sum = l.proto + (l.end - l.l4);
        int from = l.version == 6 ? l.ip + 8 : l.ip + 12;
        for (int i = 0; i < (l.version == 6 ? 32 : 8); i += 2) {
            sum += Bytes.get16(f, from + i);
        }
        for (int i = l.l4; i < l.end; i += 2) {
            sum += i + 1 < l.end ? Bytes.get16(f, i) : (f[i] & 0xff) << 8;
        }
        while (sum >> 16 != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (int) sum ^ 0xffff;
    }
}
