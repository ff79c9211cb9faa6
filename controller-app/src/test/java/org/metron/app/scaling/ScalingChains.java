package org.metron.app.scaling;

import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The chains the scaling tests deploy, compiled by hand as the synthesizer would (no synthesis in these tests):
 * a NAPT group over four UDP classes, with variants by name prefix ("slices", "replies", "answers").
 */
final class ScalingChains {
    private static final String CLICK = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN "
            + "10.9.9.9 1024-65535 - -) -> Unstrip(14) -> [0]output;";
    static final int CLASSES = 4;

    private ScalingChains() {
    }

    /** One chain: UDP to ports 1000..1003 are classes 0..3, one NAPT group; everything else dropped. */
    static CompiledChain compiled(String name, TargetProfile profile) {
        List<TrafficClass> classes = new ArrayList<>();
        List<OffloadRule> rules = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (int c = 0; c < CLASSES; c++) {
            classes.add(new TrafficClass(c, List.of("udp dst port " + (1000 + c)), 0, List.of(), false, "napt",
                    "napt"));
            rules.add(OffloadRule.of(20, RuleMatch.builder().ethType(0x0800).ipProto(17)
                    .l4Dst(RangeMatch.exact(1000 + c, 16)).build(), RuleAction.toServer(c)));
            ids.add(c);
        }
        if (name.startsWith("slices")) {
            // as the demo chain's class has: UDP with both ports 0 (what a switch reads from a later fragment)
            rules.add(0, OffloadRule.of(30, RuleMatch.builder().ethType(0x0800).ipProto(17)
                    .l4Src(RangeMatch.exact(0, 16)).l4Dst(RangeMatch.exact(0, 16)).build(), RuleAction.toServer(0)));
        }
        classes.add(new TrafficClass(CLASSES, List.of("-"), -1, List.of(), false, "", "deny"));
        rules.add(OffloadRule.of(10, RuleMatch.builder().build(), RuleAction.drop()));
        if (name.startsWith("replies")) {
            // a chain with a reply ingress: replies to the NAPT address join the NAPT group (egress 1)
            classes.add(new TrafficClass(CLASSES + 1, List.of("udp dst host 10.9.9.9"), 1, List.of(), false, "napt",
                    "reply: restore by input 1 of the SynthRewriter of 'napt'; egress 1 (fw.out1)"));
            ids.add(CLASSES + 1);
            return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, ids, CLICK, "napt", false)),
                    rules, List.of(OffloadRule.of(5, RuleMatch.builder().ethType(0x0800).ipProto(17).build(),
                    RuleAction.toServer(CLASSES + 1))), List.of("fw.out0", "fw.out1"),
                    new SynthStats(CLASSES + 2, CLASSES + 2, rules.size() + 1, 0, Map.of()));
        }
        if (name.startsWith("answers")) {
            // replies told apart by source port: reply class CLASSES + 1 + c answers forward class c only, as the
            // synthesizer finds for a chain whose reply path classifies like its forward path
            List<OffloadRule> replyRules = new ArrayList<>();
            Map<Integer, List<Integer>> answers = new java.util.TreeMap<>();
            for (int c = 0; c < CLASSES; c++) {
                int r = CLASSES + 1 + c;
                classes.add(new TrafficClass(r, List.of("udp src port " + (1000 + c)), 1, List.of(), false, "napt",
                        "reply: restore by input 1 of the SynthRewriter of 'napt'; egress 1 (fw.out1)"));
                replyRules.add(OffloadRule.of(5, RuleMatch.builder().ethType(0x0800).ipProto(17)
                        .l4Src(RangeMatch.exact(1000 + c, 16)).build(), RuleAction.toServer(r)));
                answers.put(r, List.of(c));
                ids.add(r);
            }
            return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, ids, CLICK, "napt", false)),
                    rules, replyRules, List.of("fw.out0", "fw.out1"), new SynthStats(classes.size(), classes.size(),
                    rules.size() + replyRules.size(), 0, Map.of()), answers);
        }
        return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, ids, CLICK, "napt", false)), rules,
                List.of("fw.out0"), new SynthStats(CLASSES + 1, CLASSES + 1, rules.size(), 0, Map.of()));
    }
}
