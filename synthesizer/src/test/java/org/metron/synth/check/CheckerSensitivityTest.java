package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/** The checker must notice wrong outputs: corrupt a correct compilation and expect mismatches. */
public class CheckerSensitivityTest {
    private static final ChainSpec CHAIN = SmallChainsTest.chain("fw-napt-lb", SmallChainsTest.FW,
            SmallChainsTest.NAPT, SmallChainsTest.LB);

    private static CompiledChain with(CompiledChain c, List<OffloadRule> rules, List<ClassGroup> groups) {
        return new CompiledChain(c.name(), c.target(), c.classes(), groups, rules, c.egress(), c.stats());
    }

    @Test
    public void wrongRuleActionIsCaught() {
        CompiledChain ok = Synthesizer.compile(CHAIN, TargetProfile.OPENFLOW13);
        List<OffloadRule> rules = new ArrayList<>(ok.offloadRules());
        int victim = -1;
        for (int i = 0; i < rules.size(); i++) {
            if (rules.get(i).action().type() == RuleAction.Type.TO_SERVER && rules.get(i).action().classId() == 1) {
                victim = i;
            }
        }
        assertTrue("expected a TO_SERVER(1) rule in " + rules, victim >= 0);
        rules.set(victim, OffloadRule.of(rules.get(victim).priority(), rules.get(victim).match(), RuleAction.drop()));
        EquivalenceChecker.Report r = new EquivalenceChecker(CHAIN, with(ok, rules, ok.groups()), 7).run(20000);
        assertTrue(r.toString(), r.mismatches > 0);
        assertNotNull(r.firstMismatch);
        assertTrue(r.firstMismatch, r.firstMismatch.contains("reference trace"));
    }

    @Test
    public void wrongRewritePatternIsCaught() {
        CompiledChain ok = Synthesizer.compile(CHAIN, TargetProfile.NONE);
        List<ClassGroup> groups = new ArrayList<>();
        for (ClassGroup g : ok.groups()) {
            groups.add(new ClassGroup(g.id(), g.classIds(), g.clickConfig().replace("10.0.0.2 8080", "10.0.0.2 8081"),
                    g.statefulKey(), g.classifies()));
        }
        EquivalenceChecker.Report r = new EquivalenceChecker(CHAIN, with(ok, ok.offloadRules(), groups), 7)
                .run(20000);
        assertTrue(r.toString(), r.mismatches > 0);
    }

    @Test
    public void lostFirstMatchOrderIsCaught() {
        CompiledChain ok = Synthesizer.compile(CHAIN, TargetProfile.NONE);
        List<ClassGroup> groups = new ArrayList<>();
        for (ClassGroup g : ok.groups()) {
            // reverse the software classifier's patterns; the outputs keep their positions
            String[] lines = g.clickConfig().split("\n");
            int from = -1;
            int to = -1;
            for (int i = 0; i < lines.length; i++) {
                if (lines[i].endsWith("IPClassifier(")) {
                    from = i + 1;
                }
                if (from > 0 && to < 0 && lines[i].endsWith(");")) {
                    to = i;
                }
            }
            assertTrue(g.clickConfig(), from > 0 && to > from);
            List<String> pats = new ArrayList<>();
            for (int i = from; i <= to; i++) {
                String l = lines[i].trim();
                pats.add(l.endsWith(");") ? l.substring(0, l.length() - 2) : l.substring(0, l.length() - 1));
            }
            java.util.Collections.reverse(pats);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < from; i++) {
                sb.append(lines[i]).append('\n');
            }
            sb.append(String.join(",\n", pats)).append(");\n");
            for (int i = to + 1; i < lines.length; i++) {
                sb.append(lines[i]).append('\n');
            }
            groups.add(new ClassGroup(g.id(), g.classIds(), sb.toString(), g.statefulKey(), g.classifies()));
        }
        EquivalenceChecker.Report r = new EquivalenceChecker(CHAIN, with(ok, ok.offloadRules(), groups), 7)
                .run(20000);
        assertTrue(r.toString(), r.mismatches > 0);
    }
}
