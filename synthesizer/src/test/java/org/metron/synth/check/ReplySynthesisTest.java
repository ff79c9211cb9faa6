package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainLink;
import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.Deployment;
import org.metron.synth.InterfaceRef;
import org.metron.synth.NfSpec;
import org.metron.synth.SynthesisException;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.IdleTimeouts;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Reply traffic through rewriters: replies enter at the chain's second ingress, are filtered statelessly
 * before and after the rewriter's reply input, and are restored by the mapping their forward packet made.
 */
public class ReplySynthesisTest {
    /** The idle timeouts every emitted SynthRewriter states; the NAT declares none: Click's defaults. */
    private static final String CLICK_TIMEOUTS = IdleTimeouts.CLICK_DEFAULTS.keywords();

    static final String NAPT_BOTH = "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
            + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop)\n"
            + "  -> Unstrip(14) -> ToDevice(out0);\n"
            + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> f :: IPFilter(deny udp src port 19, allow all)\n"
            + "  -> [1]rw[1] -> g :: IPFilter(deny ip tos 255, allow all) -> Unstrip(14) -> ToDevice(out1);";

    static ChainSpec bothWays(String name, String click) {
        return new ChainSpec(name, List.of(NfSpec.of("nat", click)), List.<ChainLink>of(),
                List.of(InterfaceRef.of("nat", "in0"), InterfaceRef.of("nat", "in1")),
                List.of(InterfaceRef.of("nat", "out0"), InterfaceRef.of("nat", "out1")), Deployment.DEFAULT);
    }

    private static final ChainSpec NAT = bothWays("nat", NAPT_BOTH);
    private static final TargetProfile[] TARGETS = {TargetProfile.OPENFLOW13, TargetProfile.P4_TAGGER,
        TargetProfile.NIC_RTE_FLOW, TargetProfile.NONE};

    /** Runs forward then reply on both sides with their own flow tables; asserts they agree and returns both. */
    private static Outcome[] forwardThenReply(CompiledChain out, Packet fwd, Packet reply) {
        ReferenceInterpreter ref = new ReferenceInterpreter(new ChainModel(NAT));
        SynthesizedEvaluator syn = new SynthesizedEvaluator(out);
        FlowState rs = new FlowState();
        FlowState ss = new FlowState();
        Outcome fa = ref.run(fwd, 0, true, 0, rs);
        Outcome fb = syn.run(fwd, 0, true, 0, ss);
        assertNull(out.target() + " forward", Outcome.diff(fwd, fa, fb));
        Outcome a = ref.run(reply, 0, true, 1, rs);
        Outcome b = syn.run(reply, 0, true, 1, ss);
        assertNull(out.target() + " reply: " + a.trace + " vs " + b.trace, Outcome.diff(reply, a, b));
        return new Outcome[] {fa, a, b};
    }

    @Test
    public void replyIsRestoredByItsForwardMappingOnEveryTarget() {
        Packet fwd = Pkt.of("10.0.0.5", "8.8.8.8", 17, 4000, 53).build();
        for (TargetProfile t : TARGETS) {
            CompiledChain out = Synthesizer.compile(NAT, t);
            Outcome[] o = forwardThenReply(out, fwd, Pkt.of("8.8.8.8", "192.0.2.1", 17, 53, 1024).build());
            assertEquals(0, o[0].egress);
            assertEquals(0xc0000201L, o[0].packet.get(Field.IP4_SRC));
            assertEquals(1024, o[0].packet.get(Field.L4_SRC));
            for (Outcome r : new Outcome[] {o[1], o[2]}) {
                assertEquals(t + " " + r.trace, 1, r.egress);
                assertEquals(0x0a000005L, r.packet.get(Field.IP4_DST));
                assertEquals(4000, r.packet.get(Field.L4_DST));
                assertEquals(0x08080808L, r.packet.get(Field.IP4_SRC));
                assertEquals(53, r.packet.get(Field.L4_SRC));
                assertEquals("reply SynthRewriter(PATTERN 192.0.2.1 1024-65535 - -, " + CLICK_TIMEOUTS + ")", r.stateful);
            }
            // another port: no mapping
            assertEquals(-1, forwardThenReply(out, fwd, Pkt.of("8.8.8.8", "192.0.2.1", 17, 53, 1025).build())[2]
                    .egress);
            // stateless filtering before the reply input (chargen) and after it (TOS) still applies
            Packet chargen = Pkt.of("10.0.0.5", "8.8.8.8", 17, 4000, 19).build();
            assertEquals(-1, forwardThenReply(out, chargen, Pkt.of("8.8.8.8", "192.0.2.1", 17, 19, 1024).build())[2]
                    .egress);
            assertEquals(-1, forwardThenReply(out, fwd, Pkt.of("8.8.8.8", "192.0.2.1", 17, 53, 1024)
                    .set(Field.TOS, 255).build())[2].egress);
        }
    }

    @Test
    public void replyWithoutForwardStateIsDropped() {
        Packet reply = Pkt.of("8.8.8.8", "192.0.2.1", 17, 53, 1024).build();
        for (TargetProfile t : TARGETS) {
            Outcome b = new SynthesizedEvaluator(Synthesizer.compile(NAT, t)).run(reply, 0, false, 1, new FlowState());
            assertEquals(t.toString(), -1, b.egress);
        }
    }

    @Test
    public void replyClassesShareTheFlowTableOfTheirForwardClass() {
        for (TargetProfile t : TARGETS) {
            CompiledChain out = Synthesizer.compile(NAT, t);
            int replyClass = -1;
            for (TrafficClass c : out.classes()) {
                if (c.operations().startsWith("reply: restore")) {
                    replyClass = c.id();
                }
            }
            assertTrue(out.classes().toString(), replyClass >= 0);
            int found = replyClass;
            ClassGroup g = out.groups().stream().filter(x -> x.classIds().contains(found)).findFirst().orElseThrow();
            String rw = g.classifies() ? "rw_op0" : "rw";
            assertTrue(g.clickConfig(), g.clickConfig().contains("-> [1]" + rw + ";"));
            assertTrue(g.clickConfig(), g.clickConfig().contains("-> [0]" + rw + ";"));
            if (t.capacity() > 0) {
                assertTrue(t + " has no reply rules", !out.replyRules().isEmpty());
            }
        }
    }

    @Test
    public void checkerFindsNoMismatchWithReplies() {
        for (TargetProfile t : TARGETS) {
            EquivalenceChecker.Report r = new EquivalenceChecker(NAT, Synthesizer.compile(NAT, t), 11).run(20000);
            assertNull(t + ": " + r, r.firstMismatch);
            assertEquals(20000, r.replies);
            assertTrue("too few replies found their mapping: " + r, r.repliesDelivered > 2000);
        }
    }

    @Test
    public void repliesSkipTheDpiTheirForwardFlowsPassed() {
        // the forward operation is DPI + NAPT; replies share its SynthRewriter but not the DPI
        ChainSpec dpi = bothWays("dpi-nat", "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> d :: DPI(\"evil\")\n"
                + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14)\n"
                + "  -> ToDevice(out0);\nd[1] -> Discard;\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1] -> Unstrip(14) -> ToDevice(out1);");
        for (TargetProfile t : TARGETS) {
            CompiledChain out = Synthesizer.compile(dpi, t);
            EquivalenceChecker.Report r = new EquivalenceChecker(dpi, out, 13).run(20000);
            assertNull(t + ": " + r, r.firstMismatch);
            assertTrue("too few replies found their mapping: " + r, r.repliesDelivered > 2000);
            ClassGroup g = out.groups().stream().filter(x -> x.clickConfig().contains("HyperscanDPI"))
                    .findFirst().orElseThrow();
            assertTrue(g.clickConfig(), g.clickConfig().contains("[1]rw"));
        }
    }

    @Test
    public void replyClassesWithDifferentTailsAreToldApartAfterTheSharedRewriter() {
        // two reply classes of one forward operation (TOS 0 replies to egress 1 with new MACs and a TTL
        // decrement, the rest to egress 2), and two forward classes (UDP to egress 0, TCP with a TTL decrement):
        // after the shared SynthRewriter the tails are picked by class tag, also for packets the software
        // classified (their tag is written first)
        String click = "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
                + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop)\n"
                + "  -> p :: IPClassifier(udp, -);\n"
                + "p[0] -> Unstrip(14) -> ToDevice(out0);\np[1] -> DecIPTTL -> Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1] -> t :: IPClassifier(ip tos 0, -);\n"
                + "t[0] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02)\n"
                + "  -> ToDevice(out1);\nt[1] -> Unstrip(14) -> ToDevice(out2);";
        ChainSpec c = new ChainSpec("tails", List.of(NfSpec.of("nat", click)), List.<ChainLink>of(),
                List.of(InterfaceRef.of("nat", "in0"), InterfaceRef.of("nat", "in1")),
                List.of(InterfaceRef.of("nat", "out0"), InterfaceRef.of("nat", "out1"), InterfaceRef.of("nat", "out2")),
                Deployment.DEFAULT);
        for (TargetProfile t : TARGETS) {
            CompiledChain out = Synthesizer.compile(c, t);
            EquivalenceChecker.Report r = new EquivalenceChecker(c, out, 17).run(30000);
            assertNull(t + ": " + r, r.firstMismatch);
            assertTrue("too few replies found their mapping: " + r, r.repliesDelivered > 2000);
            ClassGroup g = out.groups().stream().filter(x -> x.clickConfig().contains("SynthRewriter"))
                    .findFirst().orElseThrow();
            assertTrue(t + "\n" + g.clickConfig(), g.clickConfig().matches("(?s).*rw(_op0)?\\[1\\] -> "
                    + "Unstrip\\(14\\) -> \\w+ :: Classifier\\(4/[0-9a-f]{4}, 4/[0-9a-f]{4}\\).*"));
            if (t == TargetProfile.NONE) {
                // classified in software, then tagged for the tails after the shared rewriter
                assertTrue(g.clickConfig(), g.clickConfig().contains("-> StoreEtherAddress(02:4d:00:00:00:"));
            }
        }
    }

    private static CompiledChain withGroups(CompiledChain c, java.util.function.UnaryOperator<String> edit) {
        List<ClassGroup> groups = new ArrayList<>();
        for (ClassGroup g : c.groups()) {
            groups.add(new ClassGroup(g.id(), g.classIds(), edit.apply(g.clickConfig()), g.statefulKey(),
                    g.classifies()));
        }
        return new CompiledChain(c.name(), c.target(), c.classes(), groups, c.offloadRules(), c.replyRules(),
                c.egress(), c.stats());
    }

    @Test
    public void checkerCatchesAReplyLeavingAtTheWrongEgress() {
        CompiledChain ok = Synthesizer.compile(NAT, TargetProfile.P4_TAGGER);
        CompiledChain bad = withGroups(ok, s -> s.replace("rw[1] -> Unstrip(14) -> [1]output",
                "rw[1] -> Unstrip(14) -> [0]output"));
        EquivalenceChecker.Report r = new EquivalenceChecker(NAT, bad, 11).run(20000);
        assertTrue(r.toString(), r.mismatches > 0);
        assertTrue(r.firstMismatch, r.firstMismatch.startsWith("MISMATCH on reply"));
    }

    @Test
    public void checkerCatchesRepliesLookingInAnotherFlowTable() {
        String rw = "PATTERN 192.0.2.1 1024-65535 - -, " + CLICK_TIMEOUTS;
        CompiledChain ok = Synthesizer.compile(NAT, TargetProfile.P4_TAGGER);
        CompiledChain bad = withGroups(ok, s -> s.replace("-> [1]rw;", "-> [1]other;")
                .replace("rw :: SynthRewriter(" + rw + ");",
                        "rw :: SynthRewriter(" + rw + ");\n"
                                + "other :: SynthRewriter(" + rw + ");\n"
                                + "other[0] -> Discard;\nother[1] -> Unstrip(14) -> [1]output;"));
        assertTrue(bad.groups().toString(), bad.groups().stream().anyMatch(g -> g.clickConfig().contains("[1]other")));
        EquivalenceChecker.Report r = new EquivalenceChecker(NAT, bad, 11).run(20000);
        assertTrue(r.toString(), r.mismatches > 0);
        assertTrue(r.firstMismatch, r.firstMismatch.contains("reply without mapping"));
    }

    private static SynthesisException reject(ChainSpec c) {
        try {
            Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        } catch (SynthesisException e) {
            return e;
        }
        fail("accepted " + c.name());
        return null;
    }

    @Test
    public void repliesThatStateCannotDecideAreRefusedClearly() {
        SynthesisException e = reject(bothWays("overlap", "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
                + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1,\n"
                + "     pattern 192.0.2.1 2000-3000 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [2]rw[1] -> Unstrip(14) -> ToDevice(out1);"));
        assertEquals("nat", e.nf());
        assertEquals("rw", e.element());
        assertEquals(3, e.line());
        assertTrue(e.getMessage(), e.getMessage().contains("replies to flows of input 0 and of input 1"));

        e = reject(bothWays("pass", "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
                + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, pass 1)\n"
                + "  -> Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1] -> Unstrip(14) -> ToDevice(out1);"));
        assertEquals("rw", e.element());
        assertTrue(e.getMessage(), e.getMessage().contains("replies must enter a rewriter at a 'drop' input"));

        e = reject(bothWays("addr", "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
                + "  -> rw :: IPAddrRewriter(pattern 192.0.2.1 - - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1] -> Unstrip(14) -> ToDevice(out1);"));
        assertEquals("rw", e.element());
        assertTrue(e.getMessage(), e.getMessage().contains("IPAddrRewriter replies"));

        e = reject(bothWays("dpi", "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
                + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop)\n"
                + "  -> Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> d :: DPI(\"evil\") -> [1]rw[1] -> Unstrip(14)\n"
                + "  -> ToDevice(out1);\nd[1] -> Discard;"));
        assertTrue(e.getMessage(), e.getMessage().contains("reply traffic passes nat/d"));

        ChainSpec three = new ChainSpec("three", List.of(NfSpec.of("nat", NAPT_BOTH)), List.<ChainLink>of(),
                List.of(InterfaceRef.of("nat", "in0"), InterfaceRef.of("nat", "in1"), InterfaceRef.of("nat", "in0")),
                List.of(InterfaceRef.of("nat", "out0"), InterfaceRef.of("nat", "out1")), Deployment.DEFAULT);
        assertTrue(reject(three).getMessage().contains("at most one reply ingress"));
    }
}
