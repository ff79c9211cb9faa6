package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.SynthesisException;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;
import static org.junit.Assert.assertTrue;

/**
 * SpinCycles (docs/scaling.md): software-only and stateless, so it is kept in the group config of exactly the
 * classes that pass through it, never offloaded, and the synthesized chain stays equivalent.
 */
public class SpinCyclesSynthesisTest {
    static final String SPIN = "FromDevice(in0) -> SpinCycles(CYCLES 4000) -> ToDevice(out0);";

    @Test
    public void keptInTheGroupConfigOfTheClassesThatPassThroughIt() {
        ChainSpec c = SmallChainsTest.chain("fw-spin-napt", SmallChainsTest.FW, SPIN, SmallChainsTest.NAPT);
        CompiledChain out = Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        assertTrue(out.groups().size() >= 1);
        for (ClassGroup g : out.groups()) {
            assertTrue(g.clickConfig(), g.clickConfig().contains("SpinCycles(CYCLES 4000)"));
            // the software-classifier group mixes classes and has no single key
            assertTrue(g.statefulKey(), g.classifies() || g.statefulKey().startsWith("SpinCycles(CYCLES 4000)"));
        }
        SmallChainsTest.check(c, 5000);
    }

    @Test
    public void aSpinAloneMakesAClassNeedTheServer() {
        ChainSpec c = SmallChainsTest.chain("fw-spin", SmallChainsTest.FW, SPIN);
        CompiledChain out = Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        assertEquals(1, out.groups().stream().map(ClassGroup::statefulKey).distinct().count());
        assertTrue(out.groups().get(0).clickConfig().contains("SpinCycles(CYCLES 4000)"));
        SmallChainsTest.check(c, 5000);
    }

    private static void rejected(String click, String part) {
        try {
            Synthesizer.compile(SmallChainsTest.chain("bad", click), TargetProfile.OPENFLOW13);
            fail(click + " was accepted");
        } catch (SynthesisException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(part));
        }
    }

    @Test
    public void badArgumentsNameTheElement() {
        rejected("FromDevice(in0) -> s :: SpinCycles(CYCLES lots) -> ToDevice(out0);",
                "CYCLES must be an integer, found 'lots'");
        rejected("FromDevice(in0) -> SpinCycles -> ToDevice(out0);", "needs 'CYCLES n'");
        rejected("FromDevice(in0) -> SpinCycles(CYCLES 20000000) -> ToDevice(out0);", "outside 0..10000000");
    }
}
