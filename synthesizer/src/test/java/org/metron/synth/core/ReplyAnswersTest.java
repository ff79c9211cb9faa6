package org.metron.synth.core;

import org.junit.Test;
import org.metron.synth.ChainLink;
import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.Deployment;
import org.metron.synth.InterfaceRef;
import org.metron.synth.NfSpec;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.Assert.assertEquals;

/**
 * Which forward classes a reply class answers (CompiledChain#replyAnswers): scaling keeps a reply class on the
 * core of every forward class it answers, so the relation must never miss a pair, and should be tight enough
 * that classes told apart in both directions can move apart.
 */
public class ReplyAnswersTest {
    /**
     * NAPT then a tail per destination port (TTL decremented i times); replies told apart by their source port
     * the same way, and {@code replyDefault} for replies from any other port.
     */
    private static ChainSpec perPort(String replyDefault) {
        StringBuilder tail = new StringBuilder("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> c :: IPClassifier("
                + "udp dst port 7000, udp dst port 7001, udp dst port 7002, -);\n");
        StringBuilder back = new StringBuilder("FromDevice(in1) -> Strip(14) -> CheckIPHeader -> r :: IPClassifier("
                + "udp src port 7000, udp src port 7001, udp src port 7002, -);\n");
        for (int i = 0; i < 3; i++) {
            tail.append("c[").append(i).append("]").append(" -> DecIPTTL".repeat(i))
                    .append(" -> Unstrip(14) -> ToDevice(out0);\n");
            back.append("r[").append(i).append("]").append(" -> DecIPTTL".repeat(i))
                    .append(" -> Unstrip(14) -> ToDevice(out1);\n");
        }
        tail.append("c[3] -> Discard;\n");
        back.append("r[3] -> ").append(replyDefault).append(";\n");
        String napt = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: IPRewriter(pattern 192.0.2.1 "
                + "1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1] -> Unstrip(14) -> ToDevice(out1);";
        return new ChainSpec("per-port", List.of(NfSpec.of("napt", napt), NfSpec.of("tail", tail + back.toString())),
                List.of(ChainLink.of(InterfaceRef.of("napt", "out0"), InterfaceRef.of("tail", "in0")),
                        ChainLink.of(InterfaceRef.of("tail", "out1"), InterfaceRef.of("napt", "in1"))),
                List.of(InterfaceRef.of("napt", "in0"), InterfaceRef.of("tail", "in1")),
                List.of(InterfaceRef.of("tail", "out0"), InterfaceRef.of("napt", "out1")), Deployment.DEFAULT);
    }

    /** forward class id by its destination port, reply class id by its source port (from the filters). */
    private static Map<Integer, Integer> byPort(CompiledChain c, boolean reply) {
        Map<Integer, Integer> out = new TreeMap<>();
        for (TrafficClass t : c.classes()) {
            if (t.operations().startsWith("reply: ") != reply || t.drops()) {
                continue;
            }
            for (int p = 7000; p < 7003; p++) {
                String want = (reply ? "src port " : "dst port ") + p;
                if (t.filters().stream().anyMatch(f -> f.contains(want))) {
                    out.put(p, t.id());
                }
            }
        }
        return out;
    }

    @Test
    public void replyClassesToldApartByPortAnswerOnlyTheirOwnForwardClass() {
        for (TargetProfile t : new TargetProfile[]{TargetProfile.OPENFLOW13, TargetProfile.NONE}) {
            CompiledChain c = Synthesizer.compile(perPort("Discard"), t);
            Map<Integer, Integer> fwd = byPort(c, false);
            Map<Integer, Integer> rep = byPort(c, true);
            assertEquals(c.classes().toString(), 3, fwd.size());
            assertEquals(c.classes().toString(), 3, rep.size());
            for (int p = 7000; p < 7003; p++) {
                assertEquals(t + " port " + p, List.of(fwd.get(p)), c.replyAnswers().get(rep.get(p)));
            }
        }
    }

    @Test
    public void aReplyClassThatMatchesEveryPortAnswersEveryForwardClass() {
        // replies from other ports join the 7000 tail's class (no TTL change, same egress): that class's entries
        // now cover replies to every forward class
        CompiledChain c = Synthesizer.compile(perPort("Unstrip(14) -> ToDevice(out1)"), TargetProfile.OPENFLOW13);
        Map<Integer, Integer> fwd = byPort(c, false);
        Map<Integer, Integer> rep = byPort(c, true);
        assertEquals(List.copyOf(fwd.values()), c.replyAnswers().get(rep.get(7000)));
        assertEquals(List.of(fwd.get(7001)), c.replyAnswers().get(rep.get(7001)));
    }

    @Test
    public void dropReplyClassesAndForwardClassesAnswerNothing() {
        CompiledChain c = Synthesizer.compile(perPort("Discard"), TargetProfile.OPENFLOW13);
        for (TrafficClass t : c.classes()) {
            boolean reply = t.operations().startsWith("reply: ");
            assertEquals(t.toString(), reply && !t.drops(), c.replyAnswers().containsKey(t.id()));
        }
    }
}
