package org.metron.synth;

import org.junit.Test;
import org.metron.synth.check.SmallChainsTestAccess;
import org.metron.synth.cli.MetronSynth;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** Every kind of bad input gives one SynthesisException naming NF, element and line:col. */
public class BadInputTest {
    private static SynthesisException reject(String... clicks) {
        ChainSpec c = SmallChainsTestAccess.chain("bad", clicks);
        try {
            Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        } catch (SynthesisException e) {
            return e;
        }
        fail("accepted: " + String.join(" | ", clicks));
        return null;
    }

    private static void at(SynthesisException e, String nf, String element, int line, int col, String part) {
        assertEquals(e.getMessage(), nf, e.nf());
        assertEquals(e.getMessage(), element, e.element());
        assertEquals(e.getMessage(), line, e.line());
        assertEquals(e.getMessage(), col, e.column());
        assertTrue(e.getMessage(), e.getMessage().contains(part));
    }

    @Test
    public void malformedClick() {
        at(reject("FromDevice(in0) -> ToDevice(out0)\nCounter -> Discard;"), "nf0", null, 2, 1,
                "expected ';' or '->'");
    }

    @Test
    public void unknownElement() {
        at(reject("FromDevice(in0) ->\n  x :: Frobnicate(3) -> ToDevice(out0);"), "nf0", "x", 2, 3,
                "unknown element class 'Frobnicate'");
    }

    @Test
    public void badPatternPointsAtTheToken() {
        at(reject("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> f :: IPFilter(allow tcp,\n"
                + "   deny src hots 1.2.3.4) -> Unstrip(14) -> ToDevice(out0);"), "nf0", "f", 2, 13,
                "expected 'host', 'net' or 'port' after 'src'");
        at(reject("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> f :: IPFilter(allow dst port 99999)\n"
                + " -> Unstrip(14) -> ToDevice(out0);"), "nf0", "f", 1, 79, "expected a number 0..65535");
    }

    @Test
    public void badPortOnConnection() {
        at(reject("FromDevice(in0) -> c :: Counter;\nc [1] -> ToDevice(out0);"), "nf0", "c", 2, 7,
                "has 1 output(s), connection uses output 1");
    }

    @Test
    public void danglingEdges() {
        ChainSpec c = new ChainSpec("d", List.of(NfSpec.of("a", "FromDevice(in0) -> ToDevice(out0);"),
                NfSpec.of("b", "FromDevice(in0) -> ToDevice(out0);")),
                List.of(ChainLink.of(InterfaceRef.of("a", "out0"), InterfaceRef.of("b", "eth9"))),
                List.of(InterfaceRef.of("a", "in0")), List.of(InterfaceRef.of("b", "out0")), Deployment.DEFAULT);
        try {
            Synthesizer.compile(c, TargetProfile.OPENFLOW13);
            fail();
        } catch (SynthesisException e) {
            assertEquals("b", e.nf());
            assertTrue(e.getMessage(), e.getMessage().contains("dangling edge: link to b.eth9"));
        }
        at(reject("FromDevice(in0) -> s :: Classifier(12/0800, -); s[0] -> ToDevice(out0); s[1] -> t :: "
                + "ToDevice(out7);"), "nf0", "t", 1, 81, "dangling edge: packets leave nf0.out7");
    }

    @Test
    public void cycles() {
        at(reject("FromDevice(in0) -> a :: Counter -> b :: Counter -> a;"), "nf0", "a", 1, 20, "cycle");
        ChainSpec c = new ChainSpec("loop", List.of(NfSpec.of("a", "FromDevice(in0) -> ToDevice(out0);"),
                NfSpec.of("b", "FromDevice(in0) -> ToDevice(out0); FromDevice(in1) -> ToDevice(out1);")),
                List.of(ChainLink.of(InterfaceRef.of("a", "out0"), InterfaceRef.of("b", "in0")),
                        ChainLink.of(InterfaceRef.of("b", "out0"), InterfaceRef.of("b", "in0"))),
                List.of(InterfaceRef.of("a", "in0")), List.of(InterfaceRef.of("b", "out1")), Deployment.DEFAULT);
        try {
            Synthesizer.compile(c, TargetProfile.OPENFLOW13);
            fail();
        } catch (SynthesisException e) {
            assertEquals("b", e.nf());
            assertTrue(e.getMessage(), e.getMessage().contains("cycle"));
        }
    }

    @Test
    public void unsupportedConstructs() {
        at(reject("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: IPRewriter(drop, pattern - - - - 0 1)"
                + " -> Unstrip(14) -> ToDevice(out0);"), "nf0", "rw", 1, 67, "unsupported construct");
        at(reject("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPRewriter(pattern 1.1.1.1 1024-2000 - - 0 1)\n"
                + " -> k :: IPClassifier(src port 1500, -) -> Unstrip(14) -> ToDevice(out0);\nk[1] -> Discard;"),
                "nf0", "k", 2, 5, "tests L4_SRC, which an earlier stateful element sets per flow");
        at(reject("FromDevice(in0) -> k :: Classifier(23/06, -) -> ToDevice(out0); k[1] -> Discard;"), "nf0",
                "k", 1, 36, "beyond the Ethernet header");
        at(reject("FromDevice(in0) -> IPFilter(allow tcp) -> ToDevice(out0);"), "nf0", "IPFilter@2", 1, 20,
                "needs an IP header");
        at(reject("FromDevice(in0) -> Strip(14) -> ToDevice(out0);"), "nf0", "ToDevice@3", 1, 33,
                "bytes stripped");
    }

    @Test
    public void cliPrintsOneLineAndExits2() throws Exception {
        Path f = Files.createTempFile("bad-chain", ".json");
        try {
            Files.write(f, ("{\"name\": \"x\", \"nfs\": [{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> "
                    + "Nope -> ToDevice(out0);\"}], \"ingress\": [\"fw.in0\"], \"egress\": [\"fw.out0\"]}")
                    .getBytes(StandardCharsets.UTF_8));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int rc = MetronSynth.run(new String[] {f.toString(), "-o", f.getParent().resolve("unused").toString()},
                    new PrintStream(out, true, "UTF-8"), new PrintStream(err, true, "UTF-8"));
            String e = err.toString("UTF-8");
            assertEquals(2, rc);
            assertEquals("metron-synth: error: nf 'fw', element 'Nope@2' at 1:20: unknown element class 'Nope'\n", e);
            assertFalse(e.contains("Exception"));
        } finally {
            Files.delete(f);
        }
    }
}
