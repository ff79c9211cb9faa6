package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.BitMatch;
import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * A class divided between cores by source-port bits (docs/scaling.md#class-split) is an offload-rule
 * transformation: each rule sending the class to the server becomes two rules at its priority, matching its
 * packets with the bit clear and with it set; both halves run the same group config. The checker must find the
 * split rules + the unchanged group configs equivalent to the original chain (the demo chain, FW -> NAPT -> LB),
 * down to 16 slices, and must catch a split that loses a half or first-match order.
 */
public class ClassSplitEquivalenceTest {
    private static final long PACKETS = 20000;

    private static ChainSpec demo() throws IOException {
        return ChainSpec.fromJson(new String(Files.readAllBytes(Paths.get("..", "docs", "examples",
                "paper-fig3-fw-napt-lb.json")), StandardCharsets.UTF_8));
    }

    private static CompiledChain with(CompiledChain c, List<OffloadRule> rules) {
        return new CompiledChain(c.name(), c.target(), c.classes(), c.groups(), rules, c.replyRules(), c.egress(),
                c.stats(), c.replyAnswers());
    }

    /** Each rule sending a class to the server, divided by source-port bit {@code bit} (as RuleRetagger does). */
    private static List<OffloadRule> divided(List<OffloadRule> rules, int bit) {
        List<OffloadRule> out = new ArrayList<>();
        for (OffloadRule r : rules) {
            if (r.action().type() != RuleAction.Type.TO_SERVER) {
                out.add(r);
                continue;
            }
            int mask = r.match().l4SrcBits().map(BitMatch::mask).orElse(0);
            int value = r.match().l4SrcBits().map(BitMatch::value).orElse(0);
            for (int one = 0; one < 2; one++) {
                BitMatch b = BitMatch.of(value | one << bit, mask | 1 << bit);
                out.add(OffloadRule.of(r.priority(), r.match().toBuilder().l4SrcBits(b).build(), r.action(),
                        r.sourceClass(), r.sourceEntry()));
            }
        }
        return out;
    }

    private static long serverRules(List<OffloadRule> rules) {
        return rules.stream().filter(r -> r.action().type() == RuleAction.Type.TO_SERVER).count();
    }

    @Test
    public void theDemoChainDividedDownToSixteenSlicesStaysEquivalent() throws IOException {
        ChainSpec chain = demo();
        CompiledChain ok = Synthesizer.compile(chain, TargetProfile.OPENFLOW13);
        long before = serverRules(ok.offloadRules());
        assertTrue("the demo chain sends its stateful class to the server: " + ok.offloadRules(), before >= 1);
        List<OffloadRule> rules = ok.offloadRules();
        for (int bit = 0; bit < 4; bit++) {
            rules = divided(rules, bit);
            EquivalenceChecker.Report r = new EquivalenceChecker(chain, with(ok, rules), 11 + bit).run(PACKETS);
            assertEquals("divided by bits 0.." + bit + ": " + r, 0, r.mismatches);
            assertEquals(before << (bit + 1), serverRules(rules));
        }
    }

    @Test
    public void aSplitThatLosesAHalfOrTheOrderIsCaught() throws IOException {
        ChainSpec chain = demo();
        CompiledChain ok = Synthesizer.compile(chain, TargetProfile.OPENFLOW13);
        List<OffloadRule> halves = divided(ok.offloadRules(), 0);
        // one half forgotten: the packets with the bit set match no rule meant for them
        List<OffloadRule> lost = new ArrayList<>(halves);
        lost.removeIf(r -> r.match().l4SrcBits().map(b -> b.value() == 1).orElse(false));
        EquivalenceChecker.Report r = new EquivalenceChecker(chain, with(ok, lost), 3).run(PACKETS);
        assertTrue(r.toString(), r.mismatches > 0);
        // the halves put above every other rule: the firewall's earlier deny entries no longer come first
        int top = ok.offloadRules().stream().mapToInt(OffloadRule::priority).max().getAsInt() + 1;
        List<OffloadRule> reordered = new ArrayList<>();
        for (OffloadRule x : halves) {
            reordered.add(x.match().l4SrcBits().isPresent()
                    ? OffloadRule.of(top, x.match(), x.action(), x.sourceClass(), x.sourceEntry()) : x);
        }
        r = new EquivalenceChecker(chain, with(ok, reordered), 3).run(PACKETS);
        assertTrue(r.toString(), r.mismatches > 0);
    }
}
