package org.metron.synth.hs;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.check.PacketGenerator;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.Synthesis;
import org.metron.synth.corpus.CorpusGenerator;
import org.metron.synth.filter.Expr;
import org.metron.synth.filter.PatternParser;
import org.metron.synth.packet.Packet;

import java.util.List;

import static org.junit.Assert.assertEquals;

/**
 * Cubes printed as IPClassifier patterns (TrafficClass.filters(), the software classifier) read back as the
 * same packet sets: every entry of two corpus chains, on packets aimed at their boundaries.
 */
public class CubeTextRoundTripTest {
    @Test
    public void printedEntriesParseBackToTheSameSets() {
        for (ChainSpec c : List.of(CorpusGenerator.fwNaptLb(500, 3), CorpusGenerator.linear("acl", new String[] {"acl"}, new String[] {CorpusGenerator.acl(300, 7)}))) {
            List<Cube> entries = Synthesis.of(new ChainModel(c)).entries;
            PacketGenerator gen = new PacketGenerator(9, entries, List.of());
            Packet[] packets = new Packet[200];
            for (int i = 0; i < packets.length; i++) {
                packets[i] = gen.next();
            }
            for (int i = 0; i < entries.size(); i += 3) {
                Cube cube = entries.get(i);
                String text = CubeText.format(cube);
                Expr back = PatternParser.parse(text, 1, 1);
                for (Packet p : packets) {
                    assertEquals(text + " on " + p, cube.matches(p.v), back.eval(p.v));
                }
            }
        }
    }

    @Test
    public void setsPrintShortestForm() {
        assertEquals("src port 80", CubeText.format(Cube.of(Field.L4_SRC, IntervalSet.point(80))));
        assertEquals("(src port >= 1024 and src port <= 65535)",
                CubeText.format(Cube.of(Field.L4_SRC, IntervalSet.range(1024, 65535))));
        assertEquals("not dst port 22", CubeText.format(Cube.of(Field.L4_DST,
                IntervalSet.complement(IntervalSet.point(22), Field.L4_DST))));
        assertEquals("src net 10.0.0.0/8", CubeText.format(Cube.of(Field.IP4_SRC,
                IntervalSet.range(0x0a000000L, 0x0affffffL))));
        assertEquals("true", CubeText.format(Cube.ALL));
    }

    @Test
    public void intervalSetAlgebra() {
        long[] a = IntervalSet.union(IntervalSet.range(1, 5), IntervalSet.range(10, 20));
        long[] b = IntervalSet.range(4, 12);
        assertEquals("[4-5, 10-12]", IntervalSet.toString(IntervalSet.intersect(a, b)));
        assertEquals("[1-20]", IntervalSet.toString(IntervalSet.union(a, IntervalSet.range(6, 9))));
        assertEquals("[0, 6-9, 21-65535]", IntervalSet.toString(IntervalSet.complement(a, Field.L4_SRC)));
        assertEquals("[0-18446744073709551614]", IntervalSet.toString(
                IntervalSet.complement(IntervalSet.point(-1L), Field.IP6_SRC_LO)));
        assertEquals(4, Prefixes.of(1, 6, 16).size());
        assertEquals(1, Prefixes.of(0, -1L, 64).size());
        assertEquals(32, Prefixes.of(1, 0xfffffffeL, 32).size() / 2 + 1);
    }
}
