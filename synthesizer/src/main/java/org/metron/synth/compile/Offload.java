package org.metron.synth.compile;

import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TargetProfile;
import org.metron.synth.core.Synthesis;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The partial offload of one ingress's entries: the device rules they become (punts tagged {@code unclassified}
 * where the device cannot hold an entry) and the first entry left to software.
 * <p>
 * The paper stops at the first rule the device cannot hold (or skips it inside a tier of equal priorities). We
 * go further without losing first-match order: such an entry becomes a punt rule, its matchable superset sent to
 * the server unclassified, and later entries are still offloaded; the software classifier holds every entry from
 * the first punt on, so a punted packet still finds its first matching entry (it matched none of the earlier
 * ones). Out of capacity or nothing matchable: stop. The punts placed before an entry ({@link BlindSpotPunts})
 * count the same way: the entry is their first punt. A later entry disjoint from every punt rule above it is
 * settled: a punted packet never belongs to it (it would have matched the entry's own, higher rule first), so its
 * class need not be in software.
 */
final class Offload {
    /** Earlier punt rules an entry is checked against at most before it counts as possibly punted. */
    static final int MAX_PUNTS_CHECKED = 256;
    /** How far back {@link #widen} looks for an entry that claims the extra packets. */
    static final int WIDEN_LOOKBACK = 32;

    final List<OffloadRule> rules = new ArrayList<>(4096);
    /** The first entry left to software (size() if none). */
    int firstPunt;
    /**
     * Per entry: the device classifies its packets itself, whatever came before: it holds the entry exactly
     * and no earlier punt rule overlaps it, so none of its packets is ever punted.
     */
    boolean[] settled;
    /** Per class: entries a guard in its group needs for the punts sent there (see {@link GroupGuards}). */
    final Map<Integer, TreeSet<Integer>> guards = new HashMap<>();
    /** Per punt sent to a class: the classes its packets may belong to. */
    final List<Set<Integer>> classPunts = new ArrayList<>();

    private Offload() {
    }

    /**
     * Splits one ingress's entries into device rules and the software rest. Each rule an entry becomes names it:
     * entry i of the list is entry {@code pos[i]} of its class.
     *
     * @param classAction  what the device does with each class's packets
     * @param key          each class's stateful operation
     * @param forbidden    classes punts may not be sent to (see {@link Compiler#compile})
     * @param unclassified the tag of packets punted to the software classifier
     */
    static Offload of(Synthesis.Entries e, int[] pos, RuleAction[] classAction, String[] key, Set<Integer> forbidden,
                      TargetProfile t, int unclassified) {
        int n = e.size();
        Offload o = new Offload();
        // what the device is asked to match per entry: the entry, or a wider cube whose extra packets an
        // earlier entry already claims (first match makes them unreachable here)
        List<Cube> device = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            device.add(widen(e.cubes, i));
        }
        // exact device matches per entry; null = the target cannot hold this entry as it is
        List<List<RuleMatch>> exact = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            exact.add(t.capacity() == 0 ? null : DeviceMatch.of(device.get(i), t));
        }
        List<List<DeviceMatch.Relaxed>> before = t.capacity() == 0 ? null
                : BlindSpotPunts.of(e, device, exact, classAction, t);
        int[] tier = PriorityTiers.of(device, exact, before);
        int budget = t.capacity() - 1;
        o.firstPunt = n;
        o.settled = new boolean[n];
        List<Cube> punts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int prio = PriorityTiers.priority(tier[i]);
            boolean stop = false;
            List<DeviceMatch.Relaxed> pre = before == null ? List.of() : before.get(i);
            boolean softwarePunt = false;
            for (int k = 0; k < pre.size() && !stop; k++) {
                DeviceMatch.Relaxed punt = pre.get(k);
                int to = punt == null ? -1 : GroupGuards.classPunt(e, i, DeviceMatch.puntCover(punt.cube, t),
                        classAction, key, forbidden, o);
                if (to != -1 && punt.rules.size() <= budget) {
                    RuleAction a = to == GroupGuards.DROP_PUNT ? RuleAction.drop() : RuleAction.toServer(to);
                    for (RuleMatch rm : punt.rules) {
                        o.rules.add(OffloadRule.of(prio + pre.size() - k, rm, a));
                    }
                    budget -= punt.rules.size();
                    continue;
                }
                stop = punt == null || !o.punt(punt, prio + pre.size() - k, unclassified, budget, punts, t);
                budget -= stop ? 0 : punt.rules.size();
                o.firstPunt = Math.min(o.firstPunt, i);
                softwarePunt = true;
            }
            if (stop) {
                break;
            }
            List<RuleMatch> m = exact.get(i);
            if (m != null && m.size() <= budget) {
                RuleAction a = classAction[e.classOf(i)];
                for (RuleMatch rm : m) {
                    o.rules.add(OffloadRule.of(prio, rm, a, e.classOf(i), pos[i]));
                }
                budget -= m.size();
                o.settled[i] = !softwarePunt && punts.size() <= MAX_PUNTS_CHECKED
                        && !overlapsAny(device.get(i), punts);
                continue;
            }
            o.firstPunt = Math.min(o.firstPunt, i);
            DeviceMatch.Relaxed punt = t.capacity() == 0 ? null : DeviceMatch.relaxed(device.get(i), t);
            if (punt == null || !o.punt(punt, prio, unclassified, budget, punts, t)) {
                break;
            }
            budget -= punt.rules.size();
        }
        if (o.firstPunt < n && t.capacity() > 0) {
            o.rules.add(OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.toServer(unclassified)));
        }
        return o;
    }

    /** Adds a punt's rules if they fit the budget; false if not. Its packets join {@code punts} (model view). */
    private boolean punt(DeviceMatch.Relaxed punt, int prio, int unclassified, int budget, List<Cube> punts,
                         TargetProfile t) {
        if (punt.rules.size() > budget) {
            return false;
        }
        for (RuleMatch rm : punt.rules) {
            rules.add(OffloadRule.of(prio, rm, RuleAction.toServer(unclassified)));
        }
        punts.addAll(DeviceMatch.puntCover(punt.cube, t));
        return true;
    }

    /**
     * Entry i without its "first fragment" test when the non-first fragments it would add are all claimed by
     * one earlier entry j (devices rarely match fragment offsets). Entry j's device rule has a higher
     * priority (the widened cube overlaps it, so it gets a later tier) or is a punt to software, which
     * classifies with the original entries: either way those packets never reach entry i's rule.
     */
    private static Cube widen(List<Cube> entries, int i) {
        Cube c = entries.get(i);
        long[] off = c.get(Field.IP_OFFSET);
        if (off == null || off[0] != 0) {
            return c;
        }
        Cube wide = c.without(Field.IP_OFFSET);
        Cube extra = wide.with(Field.IP_OFFSET, IntervalSet.point(1));
        for (int j = i - 1; j >= Math.max(0, i - WIDEN_LOOKBACK); j--) {
            long[] jOff = entries.get(j).get(Field.IP_OFFSET);
            if (jOff != null && jOff[jOff.length - 1] < 1) {
                continue;  // entry j holds first fragments only: cannot claim the extra (quick reject)
            }
            if (extra.subsetOf(entries.get(j))) {
                return wide;
            }
        }
        return c;
    }

    static boolean overlapsAny(Cube c, List<Cube> cubes) {
        for (Cube d : cubes) {
            if (c.overlaps(d)) {
                return true;
            }
        }
        return false;
    }
}
