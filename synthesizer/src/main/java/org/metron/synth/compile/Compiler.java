package org.metron.synth.compile;

import org.metron.synth.ClassGroup;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.metron.synth.core.Synthesis;
import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.hs.CubeText;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Split and compile: decides which filter entries the target holds (the paper's partial-offload rule over
 * priority tiers, plus the target's capacity), turns them into prioritized device rules, and groups the
 * classes that need a server into class groups with their Click configs.
 * <p>
 * The passes: {@link TrafficClasses#action} per class, {@link Offload} per ingress (with {@link PriorityTiers},
 * {@link BlindSpotPunts} and {@link GroupGuards}), then {@link ClassGrouping}.
 */
public final class Compiler {
    /** Result of compilation, before it becomes a CompiledChain. */
    public static final class Result {
        public final List<TrafficClass> classes;
        public final List<ClassGroup> groups;
        public final List<OffloadRule> rules;
        /** Rules for the reply ingress's device (empty without one). */
        public final List<OffloadRule> replyRules;
        public final int softwareEntries;

        Result(List<TrafficClass> classes, List<ClassGroup> groups, List<OffloadRule> rules,
               List<OffloadRule> replyRules, int softwareEntries) {
            this.classes = classes;
            this.groups = groups;
            this.rules = rules;
            this.replyRules = replyRules;
            this.softwareEntries = softwareEntries;
        }
    }

    private Compiler() {
    }

    /** Compiles a synthesis for a target. */
    public static Result compile(Synthesis syn, TargetProfile t, List<String> egress) {
        RuleAction[] classAction = new RuleAction[syn.classes.size()];
        String[] key = new String[syn.classes.size()];
        for (ClassInfo c : syn.classes) {
            classAction[c.id] = TrafficClasses.action(c, t);
            key[c.id] = c.stateful;
        }
        String[] fwdText = CubeText.formatAll(syn.forward.cubes);
        String[] replyText = CubeText.formatAll(syn.reply.cubes);
        // Punts may go to a class's own group (classPunt) only if every class they may reach ends up in that one
        // group; grouping depends on what went to software, so a punt that spans groups is made a software punt
        // (its classes forbidden) and the split is done again.
        Set<Integer> forbidden = new HashSet<>();
        // where each entry lands in its class's filters(): forward entries first, then reply entries
        int[] perClass = new int[syn.classes.size()];
        int[] fwdPos = positions(syn.forward, perClass);
        int[] replyPos = positions(syn.reply, perClass);
        while (true) {
            Offload fwd = Offload.of(syn.forward, fwdPos, classAction, key, forbidden, t, TrafficClass.UNCLASSIFIED);
            Offload rep = Offload.of(syn.reply, replyPos, classAction, key, forbidden, t,
                    TrafficClass.REPLY_UNCLASSIFIED);
            ClassGrouping g = new ClassGrouping(syn, classAction, fwd, rep, fwdText, replyText);
            boolean ok = true;
            List<Set<Integer>> punted = new ArrayList<>(fwd.classPunts);
            punted.addAll(rep.classPunts);
            for (Set<Integer> reach : punted) {
                if (reach.stream().map(g.groupOf::get).distinct().count() != 1 || reach.stream()
                        .anyMatch(c -> !g.groupOf.containsKey(c))) {
                    ok &= !forbidden.addAll(reach);
                }
            }
            if (ok) {
                return new Result(TrafficClasses.of(syn, egress, fwdText, replyText),
                        g.groups(syn, fwd, rep, egress, fwdText, replyText), fwd.rules, rep.rules,
                        g.softwareEntries());
            }
        }
    }

    /** Index of each entry in its class's filter list, counting on from {@code perClass} (updated). */
    private static int[] positions(Synthesis.Entries e, int[] perClass) {
        int[] pos = new int[e.size()];
        for (int i = 0; i < e.size(); i++) {
            pos[i] = perClass[e.classOf(i)]++;
        }
        return pos;
    }
}
