package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.TrafficClassInfo.Classification;
import org.metron.app.api.TrafficClassInfo.Disposition;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.TrafficClass;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.criteria.Criterion;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What operators see of a chain's traffic classes ({@link TrafficClassInfo}): each class's filter entries in
 * first-match order, where each is classified, and the installed switch rules each became. A compiled rule
 * names its entry ({@link OffloadRule#sourceClass()}); the installed rule it became is found by what identifies
 * it on its device: role, priority (mapped as {@link RulePlanner#priorities}) and match (translated as
 * {@link OffloadRuleTranslator#match}), the arrival port aside. Scaling re-tags rules in place and reroute
 * moves them to another device: both keep priority and match, so the link survives them.
 */
final class ClassViews {
    private ClassViews() {
    }

    /**
     * Builds the view.
     *
     * @param cc        the chain compiled for its offload device (or for none when not placed)
     * @param placement where it runs, if placed
     * @param installed the switch rules it holds, if any
     */
    static List<TrafficClassInfo> of(ChainId id, CompiledChain cc, Optional<Placement> placement,
                                     Optional<InstalledState> installed) {
        Map<Integer, GroupAssignment> byClass = new HashMap<>();
        placement.ifPresent(p -> p.groups().forEach(g -> g.classIds().forEach(c -> byClass.put(c, g))));
        Map<Integer, String> compiledGroup = new HashMap<>();
        for (ClassGroup g : cc.groups()) {
            g.classIds().forEach(c -> compiledGroup.put(c, ChainBringUp.groupId(g)));
        }
        List<InstalledRule> rules = installed.map(InstalledState::switchRules).orElse(List.of());
        Sources sources = new Sources();
        sources.add(cc.offloadRules(), index(rules, Role.OFFLOAD));
        sources.add(cc.replyRules(), index(rules, Role.REPLY));

        List<TrafficClassInfo> out = new ArrayList<>();
        for (TrafficClass tc : cc.classes()) {
            List<TrafficClassInfo.Entry> entries = new ArrayList<>();
            for (int e = 0; e < tc.filters().size(); e++) {
                List<Integer> key = List.of(tc.id(), e);
                entries.add(new TrafficClassInfo.Entry(e, tc.filters().get(e),
                        sources.atSwitch.contains(key) ? Classification.SWITCH : Classification.SOFTWARE,
                        sources.installed.getOrDefault(key, List.of())));
            }
            String group = compiledGroup.getOrDefault(tc.id(), "");
            Disposition d = tc.drops() ? Disposition.DROP : group.isEmpty() ? Disposition.SWITCH : Disposition.SERVER;
            GroupAssignment g = byClass.get(tc.id());
            out.add(new TrafficClassInfo(id, tc.id(), entries, d, tc.operations(), g != null ? g.groupId() : group,
                    g == null ? null : g.tag(), g == null ? -1 : g.core(),
                    g == null ? null : placement.flatMap(Placement::server).orElse(null)));
        }
        return out;
    }

    /** Per entry (class id, entry index): whether the switch classifies it, and its installed rules. */
    private static final class Sources {
        final Set<List<Integer>> atSwitch = new HashSet<>();
        final Map<List<Integer>, List<FlowRule>> installed = new HashMap<>();

        void add(List<OffloadRule> compiled, Map<List<Object>, FlowRule> byMatch) {
            if (compiled.isEmpty()) {
                return;
            }
            int[] prio;
            try {
                prio = RulePlanner.priorities(compiled);
            } catch (MetronException e) {
                prio = null; // more levels than OpenFlow offers: never installed
            }
            for (int k = 0; k < compiled.size(); k++) {
                OffloadRule r = compiled.get(k);
                if (r.sourceClass() == OffloadRule.NO_SOURCE) {
                    continue;
                }
                List<Integer> key = List.of(r.sourceClass(), r.sourceEntry());
                if (!punt(r.action())) {
                    atSwitch.add(key);
                }
                Set<Criterion> c = prio == null || byMatch.isEmpty() ? null : criteria(r);
                FlowRule f = c == null ? null : byMatch.get(key(prio[k], c));
                if (f != null) {
                    installed.computeIfAbsent(key, x -> new ArrayList<>()).add(f);
                }
            }
        }
    }

    private static boolean punt(RuleAction a) {
        return a.type() == RuleAction.Type.TO_SERVER && (a.classId() == TrafficClass.UNCLASSIFIED
                || a.classId() == TrafficClass.REPLY_UNCLASSIFIED);
    }

    /** A compiled rule's criteria as installed, without the arrival port; null if it has no ONOS form. */
    private static Set<Criterion> criteria(OffloadRule r) {
        TrafficSelector.Builder sel = DefaultTrafficSelector.builder();
        try {
            OffloadRuleTranslator.match(r.match(), sel, r::toString);
        } catch (MetronException e) {
            return null;
        }
        return sel.build().criteria();
    }

    private static List<Object> key(int priority, Set<Criterion> criteria) {
        return List.of(priority, criteria);
    }

    private static Map<List<Object>, FlowRule> index(List<InstalledRule> rules, Role role) {
        Map<List<Object>, FlowRule> out = new HashMap<>();
        for (InstalledRule r : rules) {
            if (r.role() == role) {
                Set<Criterion> c = r.rule().selector().criteria().stream()
                        .filter(x -> x.type() != Criterion.Type.IN_PORT).collect(Collectors.toSet());
                out.putIfAbsent(key(r.rule().priority(), c), r.rule());
            }
        }
        return out;
    }
}
