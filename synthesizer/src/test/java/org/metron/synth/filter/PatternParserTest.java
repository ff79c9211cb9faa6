package org.metron.synth.filter;

import org.junit.Test;
import org.metron.synth.SynthesisException;
import org.metron.synth.check.Pkt;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** Click's pattern language, each construct on packets that must and must not match; errors with position. */
public class PatternParserTest {
    private static final Packet TCP = Pkt.of("10.1.2.3", "192.168.0.9", 6, 40000, 80).set(Field.TCP_SYN, 1).build();
    private static final Packet UDP = Pkt.of("10.9.9.9", "8.8.8.8", 17, 53, 53).set(Field.TOS, 0x28).build();
    private static final Packet ICMP = Pkt.of("172.16.0.1", "10.1.2.3", 1, 0, 0).set(Field.ICMP_TYPE, 8).build();
    private static final Packet V6 = Pkt.of("2001:db8::1", "2001:db8:1::2", 6, 1234, 443).build();
    private static final Packet FRAG = Pkt.of("10.1.2.3", "192.168.0.9", 6, 0, 0).set(Field.IP_OFFSET, 1).build();

    /** Pattern matches exactly the listed packets among the five; eval and DNF must agree. */
    private static void matches(String pattern, Packet... yes) {
        Expr e = PatternParser.parse(pattern, 1, 1);
        List<Cube> dnf = e.dnf();
        for (Packet p : new Packet[] {TCP, UDP, ICMP, V6, FRAG}) {
            boolean want = List.of(yes).contains(p);
            assertEquals(pattern + " on " + p, want, e.eval(p.v));
            assertEquals(pattern + " (dnf) on " + p, want, dnf.stream().anyMatch(c -> c.matches(p.v)));
        }
    }

    @Test
    public void hostsNetsAndDirections() {
        matches("src host 10.1.2.3", TCP, FRAG);
        matches("host 10.1.2.3", TCP, ICMP, FRAG);
        matches("dst net 10.0.0.0/8", ICMP);
        matches("src and dst net 10.0.0.0/8");
        matches("src or dst net 8.0.0.0/8", UDP);
        matches("10.9.9.9", UDP);
        matches("src host 10.9.9.9 or 172.16.0.1", UDP, ICMP);
        matches("src net 2001:db8::/32", V6);
        matches("dst host 2001:db8:1::2", V6);
    }

    @Test
    public void protocolsPortsRangesAndRelations() {
        matches("tcp", TCP, V6, FRAG);
        matches("udp port 53", UDP);
        matches("dst port 80", TCP);
        matches("port 53", UDP);
        matches("src port > 1023", TCP, V6);
        matches("dst port 1-100 and not udp", TCP);
        matches("dst port 400-500", V6);
        matches("tcp dst port http", TCP);
        matches("dst tcp port https", V6);
        matches("ip proto 17", UDP);
        matches("proto icmp", ICMP);
        matches("ip proto >= 6 and ip proto <= 6", TCP, V6, FRAG);
    }

    @Test
    public void ipFieldsFlagsAndIcmp() {
        matches("tcp opt syn", TCP);
        matches("tcp and not tcp opt syn", V6, FRAG);
        matches("ip tos 40", UDP);
        matches("ip dscp 10", UDP);
        matches("ip ttl 64", TCP, UDP, ICMP, V6, FRAG);
        matches("ip ttl < 64");
        matches("icmp type echo", ICMP);
        matches("icmp type 0");
        matches("ip frag", FRAG);
        matches("ip unfrag", TCP, UDP, ICMP, V6);
        matches("ip vers 6", V6);
        matches("not ip firstfrag", FRAG);
    }

    @Test
    public void booleanStructure() {
        matches("true", TCP, UDP, ICMP, V6, FRAG);
        matches("-", TCP, UDP, ICMP, V6, FRAG);
        matches("false");
        matches("not (tcp or udp)", ICMP);
        matches("! tcp && ! icmp", UDP);
        matches("tcp || udp and src net 10.0.0.0/8", TCP, UDP, V6, FRAG);
        matches("(tcp or udp) and src net 10.0.0.0/8", TCP, UDP, FRAG);
        matches("tcp dst port 80", TCP);
        matches("src net 10.0.0.0/8 tcp", TCP, FRAG);
        matches("not not udp", UDP);
    }

    private static void error(String pattern, int col, String part) {
        try {
            PatternParser.parse(pattern, 3, 10);
            fail(pattern);
        } catch (SynthesisException e) {
            assertEquals(e.getMessage(), 3, e.line());
            assertEquals(e.getMessage(), 10 + col, e.column());
            assertTrue(e.getMessage(), e.getMessage().contains(part));
        }
    }

    @Test
    public void errorsPointAtTheToken() {
        error("src hots 1.2.3.4", 4, "expected 'host', 'net' or 'port'");
        error("dst port 70000", 9, "expected a number 0..65535");
        error("(tcp or udp", 0, "expected ')'");
        error("src net 10.0.0.0", 8, "'net' needs a prefix length");
        error("host 10.0.0.0/8", 5, "'host' takes an address");
        error("tcp opt syx", 8, "expected a TCP flag");
        error("frobnicate", 0, "unknown pattern primitive");
        error("", 0, "empty pattern");
        error("ip vers 5", 8, "expected 4 or 6");
        assertFalse(PatternParser.parse("tcp", 1, 1).eval(UDP.v));
    }
}
