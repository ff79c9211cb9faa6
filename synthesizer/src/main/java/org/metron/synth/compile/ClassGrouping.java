package org.metron.synth.compile;

import org.metron.synth.ClassGroup;
import org.metron.synth.RuleAction;
import org.metron.synth.core.Synthesis;
import org.metron.synth.core.Synthesis.ClassInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which classes need a server, in which class group, and the groups' Click configs: group 0 classifies in
 * software (the classes a punted packet may belong to), every other group holds the classes of one stateful
 * operation the device classified.
 */
final class ClassGrouping {
    private final boolean[] viaSoftware;
    private final List<String> swEntries = new ArrayList<>();
    private final List<Integer> swClass = new ArrayList<>();
    private final List<String> swReplyEntries = new ArrayList<>();
    private final List<Integer> swReplyClass = new ArrayList<>();
    private final Set<String> answered = new HashSet<>();
    private final List<ClassInfo> swClasses = new ArrayList<>();
    private final Map<String, List<ClassInfo>> byKey = new LinkedHashMap<>();
    /** Class id -> group id. */
    final Map<Integer, Integer> groupOf = new HashMap<>();

    ClassGrouping(Synthesis syn, RuleAction[] classAction, Offload fwd, Offload rep, String[] fwdText,
                  String[] replyText) {
        viaSoftware = new boolean[syn.classes.size()];
        software(syn.forward, fwd, fwdText, viaSoftware, swEntries, swClass);
        software(syn.reply, rep, replyText, viaSoftware, swReplyEntries, swReplyClass);
        // a reply is answered by the flow table of its forward operation, so all classes of an operation that
        // replies use live where any of them must: in the classifying group if one is classified in software
        for (ClassInfo c : syn.classes) {
            if (c.repliesThroughRewriter()) {
                answered.add(c.stateful);
            }
        }
        Set<String> answeredInSoftware = new HashSet<>();
        for (ClassInfo c : syn.classes) {
            if (viaSoftware[c.id] && answered.contains(c.stateful) && !c.drops()) {
                answeredInSoftware.add(c.stateful);
            }
        }
        for (ClassInfo c : syn.classes) {
            boolean toServer = classAction[c.id].type() == RuleAction.Type.TO_SERVER;
            if (viaSoftware[c.id] || toServer && answeredInSoftware.contains(c.stateful)) {
                swClasses.add(c);
            } else if (toServer) {
                byKey.computeIfAbsent(c.stateful, k -> new ArrayList<>()).add(c);
            }
        }
        int next = 0;
        if (!swClasses.isEmpty()) {
            swClasses.forEach(c -> groupOf.put(c.id, 0));
            next = 1;
        }
        for (List<ClassInfo> cs : byKey.values()) {
            int id = next++;
            cs.forEach(c -> groupOf.put(c.id, id));
        }
    }

    /**
     * Lists the entries from the first punt on for the software classifier (all of them: first match among
     * them decides a punted packet's class) and marks the classes a punted packet can belong to: those with
     * an entry there that is not settled. A class whose entries there are all settled keeps its own group;
     * the software classifier's outputs for it are never taken.
     */
    private static void software(Synthesis.Entries e, Offload o, String[] text, boolean[] viaSoftware,
                                 List<String> swEntries, List<Integer> swClass) {
        for (int i = o.firstPunt; i < e.size(); i++) {
            if (!o.settled[i]) {
                viaSoftware[e.classOf(i)] = true;
            }
            swEntries.add(text[i]);
            swClass.add(e.classOf(i));
        }
    }

    /** The groups with their configs. */
    List<ClassGroup> groups(Synthesis syn, Offload fwd, Offload rep, List<String> egress, String[] fwdText,
                            String[] replyText) {
        List<ClassGroup> groups = new ArrayList<>();
        if (!swClasses.isEmpty()) {
            String k = swClasses.stream().allMatch(c -> c.stateful.equals(swClasses.get(0).stateful))
                    ? swClasses.get(0).stateful : "";
            Map<Integer, List<int[]>> guards = new HashMap<>();
            for (ClassInfo c : swClasses) {
                List<int[]> g = c.reply ? GroupGuards.guard(List.of(c), swClasses, rep, syn.reply)
                        : GroupGuards.guard(List.of(c), swClasses, fwd, syn.forward);
                if (g != null) {
                    guards.put(c.id, g);
                }
            }
            groups.add(new ClassGroup(0, ids(swClasses), ClickEmitter.classifying(swClasses, guards, fwdText,
                    replyText, swEntries, swClass, swReplyEntries, swReplyClass, answered, egress), k, true));
        }
        for (Map.Entry<String, List<ClassInfo>> e : byKey.entrySet()) {
            List<ClassInfo> cs = e.getValue();
            List<ClassInfo> fwdCs = new ArrayList<>();
            List<ClassInfo> repCs = new ArrayList<>();
            cs.forEach(c -> (c.reply ? repCs : fwdCs).add(c));
            groups.add(new ClassGroup(groups.size(), ids(cs), ClickEmitter.group(cs,
                    fwdCs.isEmpty() ? null : GroupGuards.guard(fwdCs, fwdCs, fwd, syn.forward), fwdText,
                    repCs.isEmpty() ? null : GroupGuards.guard(repCs, repCs, rep, syn.reply), replyText, egress),
                    e.getKey(), false));
        }
        return groups;
    }

    /** Entries the software classifier holds, forward and reply. */
    int softwareEntries() {
        return swEntries.size() + swReplyEntries.size();
    }

    private static List<Integer> ids(List<ClassInfo> cs) {
        List<Integer> out = new ArrayList<>();
        cs.forEach(c -> out.add(c.id));
        return out;
    }
}
