package org.metron.synth.elements;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.check.Outcome;
import org.metron.synth.check.Pkt;
import org.metron.synth.check.ReferenceInterpreter;
import org.metron.synth.check.SmallChainsTestAccess;
import org.metron.synth.core.ChainModel;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;
import org.metron.synth.packet.PacketText;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * One test per element: the concrete semantics on hand-made packets (what Click documents), then the same
 * one-NF chain through the differential checker on every target (so the symbolic semantics agree).
 */
public class ElementSemanticsTest {
    private static ChainSpec nf(String click) {
        return SmallChainsTestAccess.chain("t", click);
    }

    private static Outcome run(String click, Packet p) {
        return new ReferenceInterpreter(new ChainModel(nf(click))).run(p, 0, true);
    }

    private static void equivalent(String click) {
        SmallChainsTestAccess.check(nf(click), 3000);
    }

    private static final String IP = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> ";
    private static final String OUT = " -> Unstrip(14) -> ToDevice(out0);";

    @Test
    public void ipFilterFirstMatchWins() {
        String c = IP + "IPFilter(deny src net 10.0.0.0/8 and dst port 22, allow tcp, deny all)" + OUT;
        assertEquals(-1, run(c, Pkt.of("10.1.2.3", "1.1.1.1", 6, 999, 22).build()).egress);
        assertEquals(0, run(c, Pkt.of("11.1.2.3", "1.1.1.1", 6, 999, 22).build()).egress);
        assertEquals(-1, run(c, Pkt.of("11.1.2.3", "1.1.1.1", 17, 999, 22).build()).egress);
        equivalent(c);
    }

    @Test
    public void ipClassifierNumberedOutputsAndNoMatchDrops() {
        String c = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> k :: IPClassifier(udp, tcp dst port 80);\n"
                + "k[0] -> Unstrip(14) -> ToDevice(out0); k[1] -> Discard;";
        assertEquals(0, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 17, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).build()).egress);
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 1, 0, 0).build()).egress);
        equivalent(c);
    }

    @Test
    public void ipv6PatternsAndNegation() {
        String c = IP + "IPFilter(allow src net 2001:db8::/32 and not (tcp or dst host 2001:db8::1), deny all)" + OUT;
        assertEquals(0, run(c, Pkt.of("2001:db8::5", "2001:db8::2", 17, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("2001:db8::5", "2001:db8::1", 17, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("2001:db9::5", "2001:db8::2", 17, 1, 2).build()).egress);
        equivalent(c);
    }

    @Test
    public void classifierMatchesEthernetBytes() {
        String c = "FromDevice(in0) -> k :: Classifier(12/86dd, -); k[0] -> ToDevice(out0); k[1] -> Discard;";
        assertEquals(0, run(c, Pkt.of("2001:db8::5", "2001:db8::2", 17, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 17, 1, 2).build()).egress);
        equivalent(c);
    }

    @Test
    public void lookupIpRouteLongestPrefix() {
        String c = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rt :: LookupIPRoute(10.0.0.0/8 0, "
                + "10.1.0.0/16 1, 2001:db8::/32 0);\n"
                + "rt[0] -> Unstrip(14) -> ToDevice(out0); rt[1] -> Discard;";
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "10.1.9.9", 6, 1, 2).build()).egress);
        assertEquals(0, run(c, Pkt.of("1.1.1.1", "10.2.9.9", 6, 1, 2).build()).egress);
        assertEquals(0, run(c, Pkt.of("2001:db8::1", "2001:db8::9", 6, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "11.0.0.1", 6, 1, 2).build()).egress);
        equivalent(c);
    }

    @Test
    public void ipRewriterNaptPatternAndPortRange() {
        String c = IP + "IPRewriter(pattern 192.0.2.1 1024-2047 - - 0 1)" + OUT;
        Outcome o = run(c, Pkt.of("10.0.0.1", "8.8.8.8", 6, 5555, 80).build());
        assertEquals(0, o.egress);
        assertEquals("192.0.2.1", PacketText.addr(o.packet, true));
        assertEquals("1024-2047", o.allocated.get(Field.L4_SRC));
        assertEquals(80, o.packet.get(Field.L4_DST));
        assertEquals(-1, run(c, Pkt.of("10.0.0.1", "8.8.8.8", 1, 0, 0).build()).egress);
        assertEquals(-1, run(c, Pkt.of("2001:db8::1", "2001:db8::2", 6, 1, 80).build()).egress);
        equivalent(c);
    }

    @Test
    public void roundRobinMapperPoolsAndPassSpec() {
        String c = "rr :: RoundRobinIPMapper(- - 10.9.0.1 80 0 1, - - 10.9.0.2 80 0 1);\n"
                + IP + "w :: IPClassifier(tcp dst port 80, -);\n"
                + "w[0] -> lb :: IPRewriter(rr, pass 0) -> Unstrip(14) -> ToDevice(out0); w[1] -> Discard;";
        Outcome a = new ReferenceInterpreter(new ChainModel(nf(c))).run(Pkt.of("1.1.1.1", "2.2.2.2", 6, 9, 80)
                .build(), 0, false);
        Outcome b = new ReferenceInterpreter(new ChainModel(nf(c))).run(Pkt.of("1.1.1.1", "2.2.2.2", 6, 9, 80)
                .build(), 1, false);
        assertEquals("10.9.0.1", PacketText.addr(a.packet, false));
        assertEquals("10.9.0.2", PacketText.addr(b.packet, false));
        assertTrue(a.stateful, a.stateful.contains("SELECT roundrobin"));
        equivalent(c);
    }

    @Test
    public void ipAddrRewriterKeepsPortsAndHandlesAnyProtocol() {
        String c = IP + "IPAddrRewriter(pattern - - 10.0.0.9 - 0 1)" + OUT;
        Outcome o = run(c, Pkt.of("1.1.1.1", "2.2.2.2", 1, 0, 0).build());
        assertEquals("10.0.0.9", PacketText.addr(o.packet, false));
        equivalent(c);
    }

    @Test
    public void decIpTtlDecrementsAndDropsExpired() {
        String c = IP + "DecIPTTL" + OUT;
        assertEquals(63, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 2).build()).packet.get(Field.TTL));
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 2).set(Field.TTL, 1).build()).egress);
        equivalent(c);
        equivalent("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> d :: DecIPTTL -> Unstrip(14) -> "
                + "ToDevice(out0); d[1] -> Discard;");
    }

    @Test
    public void etherWritesAndVlan() {
        String c = "FromDevice(in0) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02) -> "
                + "VLANEncap(VLAN_ID 42) -> StoreEtherAddress(02:00:00:00:00:03, src) -> ToDevice(out0);";
        Outcome o = run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 2).build());
        assertEquals(0x020000000003L, o.packet.get(Field.ETH_SRC));
        assertEquals(0x020000000002L, o.packet.get(Field.ETH_DST));
        assertEquals(42, o.packet.get(Field.VLAN));
        equivalent(c);
        equivalent("FromDevice(in0) -> VLANDecap -> ToDevice(out0);");
    }

    @Test
    public void etherEncapAfterStripKeepsItsFamily() {
        String c = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> EtherEncap(0x0800, 02:00:00:00:00:01, "
                + "02:00:00:00:00:02) -> ToDevice(out0);";
        assertEquals(0, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("2001:db8::1", "2001:db8::2", 6, 1, 2).build()).egress);
        equivalent(c);
    }

    @Test
    public void dpiDropsSignatureMatches() {
        String c = IP + "d :: DPI(\"/etc/passwd\", /GET \\/[a-z]+\\.php/)" + OUT + " d[1] -> Discard;";
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).payload("x /etc/passwd y").build()).egress);
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).payload("GET /abc.php?").build()).egress);
        assertEquals(0, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).payload("GET /ABC.php?").build()).egress);
        equivalent(c);
    }

    @Test
    public void hyperscanDpiInAChainIsBlockMode() {
        String c = IP + "d :: HyperscanDPI(\"evil[0-9]+\", MODE BLOCK)" + OUT + " d[1] -> Discard;";
        assertEquals(-1, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).payload("xx evil42").build()).egress);
        assertEquals(0, run(c, Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).payload("MODE BLOCK").build()).egress);
        equivalent(c);
        try {
            run(IP + "d :: HyperscanDPI(\"evil\", MODE STREAM)" + OUT + " d[1] -> Discard;",
                    Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 80).build());
            fail("MODE STREAM accepted in a chain");
        } catch (RuntimeException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("models DPI per packet (MODE BLOCK)"));
        }
    }

    @Test
    public void noOpElementsChangeNothing() {
        String c = IP + "Counter -> AverageCounter -> Queue -> SetIPChecksum -> MarkIPHeader(0)" + OUT;
        Packet p = Pkt.of("1.1.1.1", "2.2.2.2", 6, 1, 2).build();
        Outcome o = run(c, p);
        assertEquals(p, o.packet);
        equivalent(c);
    }

    @Test
    public void compoundElementsAndDefineExpand() {
        String c = "define($NET 10.0.0.0/8);\n"
                + "elementclass Fw { $net | input -> Strip(14) -> CheckIPHeader -> IPFilter(allow src net $net, "
                + "deny all) -> Unstrip(14) -> output }\n"
                + "FromDevice(in0) -> Fw($NET) -> ToDevice(out0);";
        assertEquals(0, run(c, Pkt.of("10.1.1.1", "2.2.2.2", 6, 1, 2).build()).egress);
        assertEquals(-1, run(c, Pkt.of("11.1.1.1", "2.2.2.2", 6, 1, 2).build()).egress);
        equivalent(c);
    }

    @Test
    public void rewritersForgetIdleFlowsAfterTheirShortestTimeoutClickDefaultsOrDeclared() {
        String rw = IP + "IPRewriter(pattern 192.0.2.1 1024-2047 - - 0 1";
        // Click's defaults: TCP_DONE_TIMEOUT 240 s is the shortest (UDP 300 s, TCP 24 h)
        assertEquals(240, new ChainModel(nf(rw + ")" + OUT)).shortestIdleTimeout(), 0);
        assertEquals(30, new ChainModel(nf(rw + ", UDP_TIMEOUT 30s)" + OUT)).shortestIdleTimeout(), 0);
        assertEquals(90, new ChainModel(nf(rw + ", TCP_DONE_TIMEOUT 1.5min)" + OUT)).shortestIdleTimeout(), 0);
        // UDP_STREAMING_TIMEOUT follows UDP_TIMEOUT unless given
        assertEquals(20, new ChainModel(nf(rw + ", UDP_TIMEOUT 20000ms)" + OUT)).shortestIdleTimeout(), 0);
        assertEquals(Double.POSITIVE_INFINITY, new ChainModel(nf(IP + "IPFilter(allow all)" + OUT))
                .shortestIdleTimeout(), 0);
        try {
            new ChainModel(nf(rw + ", UDP_TIMEOUT soon)" + OUT));
            throw new AssertionError("a bad time was accepted");
        } catch (org.metron.synth.SynthesisException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("UDP_TIMEOUT: expected a time"));
            assertTrue(e.getMessage(), e.getMessage().contains("'soon'"));
        }
    }
}
