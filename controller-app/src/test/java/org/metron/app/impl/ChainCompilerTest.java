package org.metron.app.impl;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.corpus.CorpusGenerator;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

/**
 * Placement compiles a chain once per candidate device and free capacity; a compile that left nothing to
 * software answers for every capacity holding its rules. Runs on the real synthesizer.
 */
public class ChainCompilerTest {
    /**
     * A firewall of the demo's shape (host denies, one allow) on its own, allowing a destination net: a switch can
     * hold every entry. (The demo chain itself cannot be held whole on OpenFlow: OVS reads no port in fragments,
     * and its NAPT tells first fragments from later ones, so fragments go to software.)
     */
    private static final ChainSpec FW = ChainSpec.fromJson("{\"name\": \"demo\", \"nfs\": [{\"name\": \"fw\", "
            + "\"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(" + hostDenies(300)
            + "allow udp and dst net 10.0.2.0/24, deny all) -> Unstrip(14) -> ToDevice(out0);\"}], \"links\": [], "
            + "\"ingress\": [\"fw.in0\"], \"egress\": [\"fw.out0\"]}");
    /** The corpus firewall has entries no OpenFlow switch matches: some always go to software. */
    private static final ChainSpec PUNTING = CorpusGenerator.fwNaptLb(300, 11);
    private static final TargetProfile OF = TargetProfile.OPENFLOW13;

    /** The demo firewall's deny rules for a firewall of {@code rules} rules, each followed by ", ". */
    private static String hostDenies(int rules) {
        StringBuilder fw = new StringBuilder();
        for (int i = 0; i < rules - 1; i++) {
            fw.append("deny src host 10.1.").append(i / 250).append('.').append(i % 250 + 1).append(", ");
        }
        return fw.toString();
    }

    static String demoChain(int rules) {
        String fw = hostDenies(rules) + "allow udp dst port 5000, deny all";
        return "{\"name\": \"demo\", \"nfs\": ["
                + "{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(" + fw
                + ") -> Unstrip(14) -> ToDevice(out0);\"},"
                + "{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: "
                + "IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\"}],"
                + "\"links\": [{\"from\": \"fw.out0\", \"to\": \"napt.in0\"}], \"ingress\": [\"fw.in0\"], "
                + "\"egress\": [\"napt.out0\"], \"deployment\": {\"ingressPoint\": \"of:0000000000000001/1\", "
                + "\"egressPoint\": \"of:0000000000000002/2\"}}";
    }

    private static void assertSameCompile(CompiledChain a, CompiledChain b) {
        assertEquals(a.offloadRules(), b.offloadRules());
        assertEquals(a.classes(), b.classes());
        assertEquals(a.groups(), b.groups());
        assertEquals(a.stats().rulesSoftware(), b.stats().rulesSoftware());
    }

    @Test
    public void theSynthesizerGivesTheSameRulesForAnyCapacityAboveWhatItOffloadedWhole() {
        // the property ChainCompiler.standsFor relies on, checked on the synthesizer itself
        CompiledChain roomy = Synthesizer.compile(FW, OF.withCapacity(65_000));
        assertEquals("the whole firewall fits", 0, roomy.stats().rulesSoftware());
        int n = roomy.stats().rulesOffloaded();
        assertSameCompile(roomy, Synthesizer.compile(FW, OF.withCapacity(n + 1)));
        assertSameCompile(roomy, Synthesizer.compile(FW, OF.withCapacity(3 * n)));
        CompiledChain tight = Synthesizer.compile(FW, OF.withCapacity(n));
        assertTrue("one rule less and something goes to software", tight.stats().rulesSoftware() > 0);
    }

    @Test
    public void aWholeOffloadAnswersForOtherCapacitiesThatHoldIt() {
        AtomicInteger compiles = new AtomicInteger();
        ChainCompiler c = new ChainCompiler(FW, (spec, p) -> {
            compiles.incrementAndGet();
            return Synthesizer.compile(spec, p);
        });
        CompiledChain first = c.apply(OF.withCapacity(65_000));
        int n = first.stats().rulesOffloaded();
        assertSame(first, c.apply(OF.withCapacity(64_000)));
        assertSame(first, c.apply(OF.withCapacity(n + 1)));
        assertEquals(1, compiles.get());
        // too small to hold it, another profile, no capacity at all: compiled for what was asked
        CompiledChain tight = c.apply(OF.withCapacity(n));
        assertNotSame(first, tight);
        assertTrue(tight.stats().rulesSoftware() > 0);
        c.apply(TargetProfile.P4_TAGGER.withCapacity(65_000));
        c.apply(OF.withCapacity(0));
        assertEquals(4, compiles.get());
    }

    @Test
    public void aCompileThatLeftEntriesToSoftwareAnswersOnlyForItsOwnCapacity() {
        AtomicInteger compiles = new AtomicInteger();
        ChainCompiler c = new ChainCompiler(PUNTING, (spec, p) -> {
            compiles.incrementAndGet();
            return Synthesizer.compile(spec, p);
        });
        CompiledChain roomy = c.apply(OF.withCapacity(65_000));
        assertTrue(roomy.stats().rulesSoftware() > 0);
        assertSame(roomy, c.apply(OF.withCapacity(65_000)));
        CompiledChain other = c.apply(OF.withCapacity(64_000));
        assertNotSame(roomy, other);
        assertSameCompile(roomy, other);
        assertEquals(2, compiles.get());
    }
}
