package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.BlackBoxSpec;
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

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * Chains with black-box NFs (docs/blackbox.md): the cut, the group configs around the box, and the checker's
 * proof of the Click parts with the box as an opaque function.
 */
public class BlackBoxSynthesisTest {
    static final BlackBoxSpec FWD = BlackBoxSpec.program("/usr/lib/metron/metron-nf-fwd", List.of("--drop-port", "23"),
            BlackBoxSpec.Mode.RING, BlackBoxSpec.OnFailure.CLOSED, true, List.of(),
            BlackBoxSpec.FlowStatePolicy.NONE);
    /** A box that may rewrite the destination address and port: what comes after it must classify again. */
    static final BlackBoxSpec REDIRECT = BlackBoxSpec.program("/opt/nf/redirect", List.of(), BlackBoxSpec.Mode.RING,
            BlackBoxSpec.OnFailure.OPEN, true, List.of("ip_dst", "tp_dst"), BlackBoxSpec.FlowStatePolicy.PINNED);

    /** NFs in a row, nf0 first; a null Click is a black box (the next of {@code boxes}). */
    static ChainSpec chain(String name, List<BlackBoxSpec> boxes, String... clicks) {
        List<NfSpec> nfs = new ArrayList<>();
        List<ChainLink> links = new ArrayList<>();
        int b = 0;
        for (int i = 0; i < clicks.length; i++) {
            nfs.add(clicks[i] == null ? NfSpec.blackBox("nf" + i, boxes.get(b++)) : NfSpec.of("nf" + i, clicks[i]));
            if (i > 0) {
                links.add(ChainLink.of(InterfaceRef.of("nf" + (i - 1), "out0"), InterfaceRef.of("nf" + i, "in0")));
            }
        }
        return new ChainSpec(name, nfs, links, List.of(InterfaceRef.of("nf0", "in0")),
                List.of(InterfaceRef.of("nf" + (clicks.length - 1), "out0")), Deployment.DEFAULT);
    }

    static final String FW = SmallChainsTest.FW;
    static final String NAPT = SmallChainsTest.NAPT;
    static final String LB = SmallChainsTest.LB;

    @Test
    public void firewallBoxNaptLbIsEquivalentAroundTheBox() {
        ChainSpec c = chain("fw-box-napt-lb", List.of(FWD), FW, null, NAPT, LB);
        SmallChainsTest.check(c, 20000);
        CompiledChain out = Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        // the firewall's verdicts stay on the switch: drops offloaded, allowed traffic tagged for the box's group
        assertTrue(out.offloadRules().stream().anyMatch(r -> r.action().type()
                == org.metron.synth.RuleAction.Type.DROP));
        String cfg = boxGroup(out).clickConfig();
        assertTrue(cfg, cfg.contains("BlackBoxNF(NAME nf1, PROGRAM /usr/lib/metron/metron-nf-fwd, ARGS \"--drop-port "
                + "23\", MODE RING, ON_FAILURE CLOSED, RING_SIZE 1024, ATTACH_TIMEOUT 2000)"));
        // after the box: a software classifier, then NAPT+LB collapsed into one SynthRewriter per class
        assertTrue(cfg, cfg.contains("_c :: IPClassifier("));
        assertTrue(cfg, cfg.contains("SynthRewriter(PATTERN 192.0.2.1 1024-65535 10.0.0.1 8080"));
        // one box per group: every class of the group goes to the same instance
        assertEquals(cfg, 1, cfg.split("BlackBoxNF\\(").length - 1);
    }

    @Test
    public void rewritingBoxIsReclassifiedAfterIt() {
        // the LB after the box tests the destination port the box may rewrite: the checker's boxes rewrite it
        // to the LB's boundaries, so both sides must classify after the box on what it hands back
        ChainSpec c = chain("fw-redirect-lb", List.of(REDIRECT), FW, null, LB);
        SmallChainsTest.check(c, 20000);
    }

    @Test
    public void boxesInARowAndAtTheEgress() {
        SmallChainsTest.check(chain("fw-box-box-napt", List.of(FWD, REDIRECT), FW, null, null, NAPT), 10000);
        SmallChainsTest.check(chain("fw-box", List.of(REDIRECT), FW, null), 10000);
    }

    @Test
    public void checkerSeesAClickPartThatDiffersAroundTheBox() {
        // the synthesized side's group config altered after the box (its classifier's first entry sent elsewhere):
        // the checker must find it, so the 0 mismatches above mean something
        ChainSpec c = chain("fw-box-lb", List.of(FWD), FW, null, LB);
        CompiledChain out = Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        ClassGroup g = boxGroup(out);
        String broken = g.clickConfig().replaceFirst("_c\\[0\\] -> [A-Za-z0-9_]+;", "_c[0] -> Discard;");
        assertFalse(broken.equals(g.clickConfig()));
        List<ClassGroup> groups = new ArrayList<>(out.groups());
        groups.set(g.id(), new ClassGroup(g.id(), g.classIds(), broken, g.statefulKey(), g.classifies()));
        CompiledChain bad = new CompiledChain(out.name(), out.target(), out.classes(), groups, out.offloadRules(),
                out.egress(), out.stats());
        EquivalenceChecker.Report r = new EquivalenceChecker(c, bad, 42).run(5000);
        assertTrue(r.toString(), r.mismatches > 0);
    }

    @Test
    public void classReachingTheBoxSaysSo() {
        CompiledChain out = Synthesizer.compile(chain("fw-box-napt", List.of(FWD), FW, null, NAPT),
                TargetProfile.OPENFLOW13);
        TrafficClass tc = out.classes().stream().filter(x -> x.operations().contains("black box")).findFirst()
                .orElseThrow();
        assertTrue(tc.operations(), tc.operations().contains("black box nf1 (may drop, rewrites nothing)"));
        assertTrue(tc.stateful());
    }

    @Test
    public void unsupportedUsesAreRefusedNamingTheBox() {
        expect(() -> Synthesizer.compile(chain("box-first", List.of(FWD), null, NAPT), TargetProfile.OPENFLOW13),
                "ingress nf0.in0 is a black box");
        String macTest = "FromDevice(in0) -> c :: Classifier(0/020000000001, -); c[0] -> ToDevice(out0); "
                + "c[1] -> Discard;";
        expect(() -> Synthesizer.compile(chain("box-mac", List.of(FWD), FW, null, macTest), TargetProfile.OPENFLOW13),
                "tests the destination MAC");
        expect(() -> Synthesizer.compile(chain("own-element", List.of(),
                "FromDevice(in0) -> BlackBoxNF(NAME x, PROGRAM /bin/true) -> ToDevice(out0);"),
                TargetProfile.OPENFLOW13), "declare the NF as \"blackbox\"");
    }

    private static ClassGroup boxGroup(CompiledChain out) {
        return out.groups().stream().filter(g -> g.clickConfig().contains("BlackBoxNF(")).findFirst().orElseThrow();
    }

    private static void expect(Runnable r, String fragment) {
        try {
            r.run();
            fail("accepted");
        } catch (SynthesisException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(fragment));
        }
    }
}
