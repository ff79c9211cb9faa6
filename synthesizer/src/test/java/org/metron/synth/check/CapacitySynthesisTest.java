package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.SynthesisException;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * A rewriter's declared mapping capacity (Click's CAPACITY / MAPPING_CAPACITY, flows per core) reaches the group
 * configs: the SynthRewriter that collapses a chain's rewriters declares the smallest of their capacities (a flow
 * needs a mapping in each), and none when no rewriter declares one (the agent's table then grows, as Click's holds
 * every flow). The synthesized chain stays equivalent (the checker compares the capacity as part of each class's
 * stateful operation).
 */
public class CapacitySynthesisTest {
    static String napt(String keywords) {
        return SmallChainsTest.NAPT.replace("0 1, drop)", "0 1, drop" + keywords + ")");
    }

    static String lb(String keywords) {
        return SmallChainsTest.LB.replace("IPRewriter(rr, drop)", "IPRewriter(rr, drop" + keywords + ")");
    }

    /**
     * Every group's SynthRewriter declares one of {@code allowed} ("" = none), and some declares {@code required};
     * the synthesized chain is equivalent to the original.
     */
    private static void rewritersDeclare(ChainSpec c, String required, String... allowed) {
        rewritersDeclare(c, args -> {
            int cap = args.indexOf(", CAPACITY ");
            int end = cap < 0 ? -1 : args.indexOf(',', cap + 11);  // the timeouts follow it
            return cap < 0 ? "" : args.substring(cap + 11, end < 0 ? args.length() : end);
        }, required, allowed);
    }

    /**
     * Every group's SynthRewriter's arguments (without the parentheses) give, by {@code declared}, one of
     * {@code allowed}, and some give {@code required}; the synthesized chain is equivalent to the original.
     */
    static void rewritersDeclare(ChainSpec c, java.util.function.Function<String, String> declared, String required,
                                 String... allowed) {
        CompiledChain out = Synthesizer.compile(c, TargetProfile.OPENFLOW13);
        boolean seen = false;
        for (ClassGroup g : out.groups()) {
            for (String line : g.clickConfig().split("\n")) {
                int at = line.indexOf("SynthRewriter(");
                if (at < 0) {
                    continue;
                }
                String value = declared.apply(line.substring(at + 14, line.indexOf(')', at)));
                assertTrue(g.clickConfig(), java.util.Arrays.asList(allowed).contains(value));
                seen |= value.equals(required);
            }
        }
        assertTrue("no SynthRewriter declares '" + required + "'", seen);
        SmallChainsTest.check(c, 3000);
    }

    @Test
    public void aDeclaredCapacityReachesTheGroupConfig() {
        rewritersDeclare(SmallChainsTest.chain("napt-cap", napt(", MAPPING_CAPACITY 100000")), "100000", "100000");
        rewritersDeclare(SmallChainsTest.chain("napt-cap2", napt(", CAPACITY 5000, TCP_TIMEOUT 60")), "5000", "5000");
    }

    @Test
    public void collapsedRewritersHoldTheSmallestDeclaredCapacity() {
        // Classes through NAPT and LB: 40000; classes the LB passes untouched keep only the NAPT's 100000.
        rewritersDeclare(SmallChainsTest.chain("fw-napt-lb-cap", SmallChainsTest.FW,
                napt(", MAPPING_CAPACITY 100000"), lb(", MAPPING_CAPACITY 40000")), "40000", "40000", "100000");
        rewritersDeclare(SmallChainsTest.chain("napt-lb-one-cap", napt(""), lb(", CAPACITY 70000")), "70000",
                "70000", "");
    }

    @Test
    public void withoutADeclaredCapacityNoneIsEmitted() {
        rewritersDeclare(SmallChainsTest.chain("fw-napt-lb", SmallChainsTest.FW, napt(""), lb("")), "", "");
    }

    @Test
    public void aCapacityNamingAnotherRewriterIsRefused() {
        try {
            Synthesizer.compile(SmallChainsTest.chain("shared", napt(", MAPPING_CAPACITY other")),
                    TargetProfile.OPENFLOW13);
            fail("accepted a shared capacity");
        } catch (SynthesisException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(
                    "MAPPING_CAPACITY: sharing another rewriter's capacity ('other') is not supported"));
        }
    }
}
