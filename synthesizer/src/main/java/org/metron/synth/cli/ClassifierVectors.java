package org.metron.synth.cli;

import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.NfSpec;
import org.metron.synth.check.PacketGenerator;
import org.metron.synth.core.NfGraph;
import org.metron.synth.core.Run;
import org.metron.synth.elements.Element;
import org.metron.synth.elements.IpClassifier;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.Packet;
import org.metron.synth.packet.PacketText;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Test vectors for another implementation of the IP filter language (the agent): seeded packets aimed at the
 * boundaries of every named IPClassifier/IPFilter in the emitted group configs (column {@code g<group>.<element>})
 * and in the chain's NF configs ({@code nf.<nf>.<element>}), each with the output the synthesizer's own element
 * semantics give it in every one of them. One TSV: a header naming the columns, then one packet per line (header
 * fields as the packet model holds them; the classifiers' outputs, -1 = dropped).
 */
public final class ClassifierVectors {
    /** Packet columns, in order; a classifier column is {@code g<group>.<element>}. */
    static final String PACKET_COLUMNS = "family\tsrc\tdst\tproto\tsport\tdport\ttcpflags\tttl\ttos\tmf\toffset\ticmp";

    private ClassifierVectors() {
    }

    private static final class Probe {
        final String column;
        final IpClassifier element;

        Probe(String column, IpClassifier element) {
            this.column = column;
            this.element = element;
        }
    }

    /** The TSV for {@code packets} packets; only the header when the groups have no IP classifier. */
    public static String tsv(ChainSpec spec, CompiledChain chain, long packets, long seed) {
        List<Probe> probes = new ArrayList<>();
        List<Cube> cubes = new ArrayList<>();
        for (ClassGroup g : chain.groups()) {
            collect(new NfGraph("group" + g.id(), g.clickConfig()), "g" + g.id() + ".", probes, cubes);
        }
        for (NfSpec nf : spec.nfs()) {
            if (nf.isBlackBox()) {
                continue;
            }
            collect(new NfGraph(nf.name(), nf.click()), "nf." + nf.name() + ".", probes, cubes);
        }
        StringBuilder sb = new StringBuilder(PACKET_COLUMNS);
        probes.forEach(p -> sb.append('\t').append(p.column));
        sb.append('\n');
        if (probes.isEmpty()) {
            return sb.toString();
        }
        PacketGenerator gen = new PacketGenerator(seed, cubes, List.of());
        for (long n = 0; n < packets; ) {
            Packet p = gen.next();
            // Rows describe valid IP headers, and IPv6 ones without extension headers: an IPv6 fragment would need
            // a fragment header on the wire.
            if (p.check != HeaderCheck.VALID
                    || p.isIp6() && (p.get(Field.IP_MF) != 0 || p.get(Field.IP_OFFSET) != 0)) {
                continue;
            }
            row(sb, p);
            for (Probe pr : probes) {
                sb.append('\t').append(pr.element.push(p.copy(), 0, new Run(0, false)));
            }
            sb.append('\n');
            n++;
        }
        return sb.toString();
    }

    /** Named IP classifiers only: another implementation finds them in the config text by name. */
    private static void collect(NfGraph graph, String prefix, List<Probe> probes, List<Cube> cubes) {
        for (Map.Entry<String, Element> e : new TreeMap<>(graph.elements()).entrySet()) {
            if (e.getValue() instanceof IpClassifier && e.getKey().indexOf('@') < 0) {
                IpClassifier c = (IpClassifier) e.getValue();
                probes.add(new Probe(prefix + e.getKey(), c));
                c.ruleCubes().forEach(cubes::addAll);
            }
        }
    }

    private static void row(StringBuilder sb, Packet p) {
        int flags = 0;
        for (Field f : Field.values()) {
            if (f.tcpFlagBit() != 0 && p.get(f) != 0) {
                flags |= f.tcpFlagBit();
            }
        }
        sb.append(p.isIp6() ? 6 : 4).append('\t').append(PacketText.addr(p, true)).append('\t')
                .append(PacketText.addr(p, false));
        for (Field f : new Field[] {Field.IP_PROTO, Field.L4_SRC, Field.L4_DST}) {
            sb.append('\t').append(p.get(f));
        }
        sb.append('\t').append(flags);
        for (Field f : new Field[] {Field.TTL, Field.TOS, Field.IP_MF, Field.IP_OFFSET, Field.ICMP_TYPE}) {
            sb.append('\t').append(p.get(f));
        }
    }
}
