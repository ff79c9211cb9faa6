package org.metron.synth.compile;

import org.metron.synth.RuleAction;
import org.metron.synth.core.Synthesis;
import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.hs.Cube;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Punts sent to a class's own group instead of the software classifier, and the guard that group then needs:
 * an IPFilter over the entries those punts can reach and the classes' own, in first-match order (written by
 * {@link ClickEmitter}), which drops what a drop entry takes first and tags the rest with their class.
 */
final class GroupGuards {
    /** Entries {@link #classPunt} looks at, at most, after the punt's entry. */
    static final int MAX_GUARD_SCAN = 4096;
    /** {@link #classPunt}'s answer for punts whose packets every possible entry drops. */
    static final int DROP_PUNT = -2;

    private GroupGuards() {
    }

    /**
     * The class a punt placed before entry i can send its packets to instead of the software classifier, or -1:
     * when every entry from i on that can hold them (overlapping the punt's packets, {@code cover}), up to one
     * holding them all, is a drop or of a class whose packets go to a server anyway with one stateful
     * operation, the group of those classes can decide them itself with a guard ({@link #guard}). The classes
     * keep their group (and scaling can split it); without this, a port rule's fragment punt would put every
     * class after it into the classifying group. {@link #DROP_PUNT} if every such entry drops. Records the
     * guard's entries in {@code o}.
     */
    static int classPunt(Synthesis.Entries e, int i, List<Cube> cover, RuleAction[] classAction, String[] key,
                         Set<Integer> forbidden, Offload o) {
        int found = -1;
        Set<Integer> reach = new HashSet<>();
        List<Integer> need = new ArrayList<>();
        int n = e.size();
        int j = i;
        for (; j < n && j - i < MAX_GUARD_SCAN; j++) {
            Cube c = e.cubes.get(j);
            if (!Offload.overlapsAny(c, cover)) {
                continue;
            }
            int cls = e.classOf(j);
            RuleAction a = classAction[cls];
            if (a.type() != RuleAction.Type.DROP) {
                if (a.type() != RuleAction.Type.TO_SERVER || forbidden.contains(cls)
                        || found >= 0 && !key[found].equals(key[cls])) {
                    return -1;
                }
                found = found < 0 ? cls : found;
                reach.add(cls);
            }
            need.add(j);
            if (cover.stream().allMatch(x -> x.subsetOf(c))) {
                break;  // entry j takes every packet of the punt that got this far: no later entry is first
            }
        }
        if (j == i + MAX_GUARD_SCAN || found < 0 && j == n) {
            return -1;
        }
        if (found < 0) {
            return DROP_PUNT;  // every entry that can take them drops them: so does the switch
        }
        for (int c : reach) {
            o.guards.computeIfAbsent(c, k -> new TreeSet<>()).addAll(need);
        }
        o.classPunts.add(reach);
        return found;
    }

    /**
     * The guard of the packets tagged with {@code tagged}'s classes, in a group holding {@code group}: the entries
     * the punts sent to those classes need and the classes' own entries, in first-match order, each as {entry,
     * class its packets go to, or -1 for a drop}; null if no punt reaches them, or their packets need neither
     * dropping nor another class's tag. (A packet a switch classified exactly first matches its own class's
     * entry; a punted one its first matching entry of those the punt can reach, all of which are there.)
     */
    static List<int[]> guard(List<ClassInfo> tagged, List<ClassInfo> group, Offload o, Synthesis.Entries e) {
        TreeSet<Integer> need = new TreeSet<>();
        Set<Integer> ids = new HashSet<>();
        tagged.forEach(c -> ids.add(c.id));
        for (ClassInfo c : tagged) {
            need.addAll(o.guards.getOrDefault(c.id, new TreeSet<>()));
        }
        if (need.stream().allMatch(j -> ids.contains(e.classOf(j))) && (ids.size() == 1 || need.isEmpty())) {
            return null;
        }
        Set<Integer> members = new HashSet<>();
        group.forEach(c -> members.add(c.id));
        for (int j = 0; j < e.size(); j++) {
            if (ids.contains(e.classOf(j))) {
                need.add(j);
            }
        }
        List<int[]> out = new ArrayList<>();
        for (int j : need) {
            out.add(new int[] {j, members.contains(e.classOf(j)) ? e.classOf(j) : -1});
        }
        return out;
    }
}
