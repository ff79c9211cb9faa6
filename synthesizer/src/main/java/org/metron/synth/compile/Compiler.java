package org.metron.synth.compile;

import org.metron.synth.ClassGroup;
import org.metron.synth.HeaderWrite;
import org.metron.synth.MatchField;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.metron.synth.core.Synthesis;
import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.CubeText;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Split and compile: decides which filter entries the target holds (the paper's partial-offload rule over
 * priority tiers, plus the target's capacity), turns them into prioritized device rules, and groups the
 * classes that need a server into class groups with their Click configs.
 */
public final class Compiler {
    /** Entries per priority tier at most; a larger tier only saves priority levels, never changes meaning. */
    static final int MAX_TIER = 16;
    /** Priority of the first tier; OpenFlow priorities are 16-bit. */
    static final int TOP_PRIORITY = 60000;

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

    /** Device rules of one ingress's entries and the first entry left to software (size() if none). */
    private static final class Offload {
        final List<OffloadRule> rules = new ArrayList<>(4096);
        int firstPunt;
        /**
         * Per entry: the device classifies its packets itself, whatever came before: it holds the entry exactly
         * and no earlier punt rule overlaps it, so none of its packets is ever punted.
         */
        boolean[] settled;
        /** Per class: entries a guard in its group needs for the punts sent there (see {@link #classPunt}). */
        final Map<Integer, java.util.TreeSet<Integer>> guards = new HashMap<>();
        /** Per punt sent to a class: the classes its packets may belong to. */
        final List<Set<Integer>> classPunts = new ArrayList<>();
    }

    /** Earlier punt rules an entry is checked against at most before it counts as possibly punted. */
    static final int MAX_PUNTS_CHECKED = 256;

    /** Compiles a synthesis for a target. */
    public static Result compile(Synthesis syn, TargetProfile t, List<String> egress) {
        RuleAction[] classAction = new RuleAction[syn.classes.size()];
        String[] key = new String[syn.classes.size()];
        for (ClassInfo c : syn.classes) {
            classAction[c.id] = action(c, t);
            key[c.id] = c.stateful;
        }
        String[] fwdText = text(syn.forward);
        String[] replyText = text(syn.reply);
        // Punts may go to a class's own group (classPunt) only if every class they may reach ends up in that one
        // group; grouping depends on what went to software, so a punt that spans groups is made a software punt
        // (its classes forbidden) and the split is done again.
        Set<Integer> forbidden = new HashSet<>();
        // where each entry lands in its class's filters(): forward entries first, then reply entries
        int[] perClass = new int[syn.classes.size()];
        int[] fwdPos = positions(syn.forward, perClass);
        int[] replyPos = positions(syn.reply, perClass);
        while (true) {
            Offload fwd = offload(syn.forward, fwdPos, classAction, key, forbidden, t, TrafficClass.UNCLASSIFIED);
            Offload rep = offload(syn.reply, replyPos, classAction, key, forbidden, t,
                    TrafficClass.REPLY_UNCLASSIFIED);
            Grouping g = new Grouping(syn, classAction, fwd, rep, fwdText, replyText);
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
                return g.result(syn, fwd, rep, egress, fwdText, replyText);
            }
        }
    }

    /** Which classes need a server, in which group, and the groups' configs. */
    private static final class Grouping {
        final boolean[] viaSoftware;
        final List<String> swEntries = new ArrayList<>();
        final List<Integer> swClass = new ArrayList<>();
        final List<String> swReplyEntries = new ArrayList<>();
        final List<Integer> swReplyClass = new ArrayList<>();
        final Set<String> answered = new HashSet<>();
        final List<ClassInfo> swClasses = new ArrayList<>();
        final Map<String, List<ClassInfo>> byKey = new LinkedHashMap<>();
        /** Class id -> group id. */
        final Map<Integer, Integer> groupOf = new HashMap<>();

        Grouping(Synthesis syn, RuleAction[] classAction, Offload fwd, Offload rep, String[] fwdText,
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

        Result result(Synthesis syn, Offload fwd, Offload rep, List<String> egress, String[] fwdText,
                      String[] replyText) {
            List<ClassGroup> groups = new ArrayList<>();
            if (!swClasses.isEmpty()) {
                String k = swClasses.stream().allMatch(c -> c.stateful.equals(swClasses.get(0).stateful))
                        ? swClasses.get(0).stateful : "";
                Map<Integer, List<int[]>> guards = new HashMap<>();
                for (ClassInfo c : swClasses) {
                    List<int[]> g = c.reply ? guard(List.of(c), swClasses, rep, syn.reply)
                            : guard(List.of(c), swClasses, fwd, syn.forward);
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
                        fwdCs.isEmpty() ? null : guard(fwdCs, fwdCs, fwd, syn.forward), fwdText,
                        repCs.isEmpty() ? null : guard(repCs, repCs, rep, syn.reply), replyText, egress),
                        e.getKey(), false));
            }
            int softwareEntries = swEntries.size() + swReplyEntries.size();
            return new Result(classes(syn, egress, fwdText, replyText), groups, fwd.rules, rep.rules,
                    softwareEntries);
        }
    }

    private static boolean overlapsAny(Cube c, List<Cube> cubes) {
        for (Cube d : cubes) {
            if (c.overlaps(d)) {
                return true;
            }
        }
        return false;
    }

    private static String[] text(Synthesis.Entries e) {
        return CubeText.formatAll(e.cubes);
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

    /** Index of each entry in its class's filter list, counting on from {@code perClass} (updated). */
    private static int[] positions(Synthesis.Entries e, int[] perClass) {
        int[] pos = new int[e.size()];
        for (int i = 0; i < e.size(); i++) {
            pos[i] = perClass[e.classOf(i)]++;
        }
        return pos;
    }

    /**
     * Splits one ingress's entries into device rules (punts tagged {@code unclassified}) and the software rest.
     * Each rule an entry becomes names it: entry i of the list is entry {@code pos[i]} of its class.
     */
    private static Offload offload(Synthesis.Entries e, int[] pos, RuleAction[] classAction, String[] key,
                                   Set<Integer> forbidden, TargetProfile t, int unclassified) {
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
        List<List<DeviceMatch.Relaxed>> before = t.capacity() == 0 ? null : puntsBefore(e, device, exact, classAction,
                t);
        // priority tiers: consecutive entries that pairwise do not overlap share a priority; an entry the device
        // cannot hold gets a tier of its own (its punt rule below is a superset that may overlap anything), and so
        // does each punt placed before an entry (a tier between the entry and everything above it)
        int[] tier = new int[n];
        int cur = 0;
        int tierStart = 0;
        for (int i = 0; i < n; i++) {
            boolean pre = before != null && !before.get(i).isEmpty();
            if (pre) {
                cur += before.get(i).size();
            }
            boolean newTier = i > 0 && (pre || i - tierStart >= MAX_TIER || exact.get(i) == null
                    || exact.get(i - 1) == null);
            for (int j = tierStart; j < i && !newTier; j++) {
                newTier = device.get(j).overlaps(device.get(i));
            }
            if (newTier) {
                cur++;
                tierStart = i;
            }
            tier[i] = cur;
        }
        if (cur >= TOP_PRIORITY - 2) {
            throw new org.metron.synth.SynthesisException("chain needs " + (cur + 1) + " priority levels, more than "
                    + "the " + (TOP_PRIORITY - 2) + " a 16-bit priority field leaves");
        }
        // partial offload. The paper stops at the first rule the device cannot hold (or skips it inside a tier of
        // equal priorities). We go further without losing first-match order: such an entry becomes a punt rule,
        // its matchable superset sent to the server unclassified, and later entries are still offloaded; the
        // software classifier holds every entry from the first punt on, so a punted packet still finds its first
        // matching entry (it matched none of the earlier ones). Out of capacity or nothing matchable: stop.
        // The punts placed before an entry (puntsBefore) count the same way: the entry is their first punt.
        // A later entry disjoint from every punt rule above it is settled: a punted packet never belongs to it
        // (it would have matched the entry's own, higher rule first), so its class need not be in software.
        int budget = t.capacity() - 1;
        o.firstPunt = n;
        o.settled = new boolean[n];
        List<Cube> punts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int prio = TOP_PRIORITY - tier[i];
            boolean stop = false;
            List<DeviceMatch.Relaxed> pre = before == null ? List.of() : before.get(i);
            boolean softwarePunt = false;
            for (int k = 0; k < pre.size() && !stop; k++) {
                DeviceMatch.Relaxed punt = pre.get(k);
                int to = punt == null ? -1
                        : classPunt(e, i, DeviceMatch.puntCover(punt.cube, t), classAction, key, forbidden, o);
                if (to != -1 && punt.rules.size() <= budget) {
                    RuleAction a = to == DROP_PUNT ? RuleAction.drop() : RuleAction.toServer(to);
                    for (RuleMatch rm : punt.rules) {
                        o.rules.add(OffloadRule.of(prio + pre.size() - k, rm, a));
                    }
                    budget -= punt.rules.size();
                    continue;
                }
                stop = punt == null || !punt(o, punt, prio + pre.size() - k, unclassified, budget, punts, t);
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
            if (punt == null || !punt(o, punt, prio, unclassified, budget, punts, t)) {
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
    private static boolean punt(Offload o, DeviceMatch.Relaxed punt, int prio, int unclassified, int budget,
                                List<Cube> punts, TargetProfile t) {
        if (punt.rules.size() > budget) {
            return false;
        }
        for (RuleMatch rm : punt.rules) {
            o.rules.add(OffloadRule.of(prio, rm, RuleAction.toServer(unclassified)));
        }
        punts.addAll(DeviceMatch.puntCover(punt.cube, t));
        return true;
    }

    /** Entries {@link #classPunt} looks at, at most, after the punt's entry. */
    static final int MAX_GUARD_SCAN = 4096;

    /**
     * The class a punt placed before entry i can send its packets to instead of the software classifier, or -1:
     * when every entry from i on that can hold them (overlapping the punt's packets, {@code cover}), up to one
     * holding them all, is a drop or of a class whose packets go to a server anyway with one stateful
     * operation, the group of those classes can decide them itself: a guard there (an IPFilter over those entries
     * and the classes' own, in first-match order: Compiler#guard, ClickEmitter) drops those a drop entry takes
     * first and tags the others with their class. The classes keep their group (and scaling can split it);
     * without this, a port rule's fragment punt would put every class after it into the classifying group.
     * {@link #DROP_PUNT} if every such entry drops. Records the guard's entries in {@code o}.
     */
    private static int classPunt(Synthesis.Entries e, int i, List<Cube> cover, RuleAction[] classAction,
                                 String[] key, Set<Integer> forbidden, Offload o) {
        int found = -1;
        Set<Integer> reach = new HashSet<>();
        List<Integer> need = new ArrayList<>();
        int n = e.size();
        int j = i;
        for (; j < n && j - i < MAX_GUARD_SCAN; j++) {
            Cube c = e.cubes.get(j);
            if (!overlapsAny(c, cover)) {
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
            o.guards.computeIfAbsent(c, k -> new java.util.TreeSet<>()).addAll(need);
        }
        o.classPunts.add(reach);
        return found;
    }

    /** {@link #classPunt}'s answer for punts whose packets every possible entry drops. */
    static final int DROP_PUNT = -2;

    /**
     * The guard of the packets tagged with {@code tagged}'s classes, in a group holding {@code group}: the entries
     * the punts sent to those classes need and the classes' own entries, in first-match order, each as {entry,
     * class its packets go to, or -1 for a drop}; null if no punt reaches them, or their packets need neither
     * dropping nor another class's tag. (A packet a switch classified exactly first matches its own class's
     * entry; a punted one its first matching entry of those the punt can reach, all of which are there.)
     */
    private static List<int[]> guard(List<ClassInfo> tagged, List<ClassInfo> group, Offload o, Synthesis.Entries e) {
        java.util.TreeSet<Integer> need = new java.util.TreeSet<>();
        Set<Integer> ids = new HashSet<>();
        tagged.forEach(c -> ids.add(c.id));
        for (ClassInfo c : tagged) {
            need.addAll(o.guards.getOrDefault(c.id, new java.util.TreeSet<>()));
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

    /** How many recent punts a new punt before an entry is compared with (it is left out if one covers it). */
    static final int PUNT_LOOKBACK = 32;

    /**
     * Punts placed just above each entry's rules (a list per entry, null elements = nothing matchable: stop), for
     * packets the device sees differently from Click:
     * <ul>
     *   <li>an entry testing ports or ICMP type on a target that reads them as 0 in every fragment: its
     *       fragments ({@link DeviceMatch#fragmentPunt}), which its rules would judge by ports they do not
     *       read;</li>
     *   <li>frames whose IP header the switch cannot parse, read with every IP field 0 (and dropped by the
     *       chain's CheckIPHeader): before the first entry holding that all-zero packet of each family, unless
     *       its class drops anyway or its rules are a punt already;</li>
     *   <li>later IPv6 fragments on a target that reads their protocol as the fragment header's (44): before
     *       the first entry that tests the protocol of IPv6 packets.</li>
     * </ul>
     * A punt whose cube lies inside one of the last {@link #PUNT_LOOKBACK} ones is left out: the earlier one,
     * higher, takes all its packets.
     */
    private static List<List<DeviceMatch.Relaxed>> puntsBefore(Synthesis.Entries e, List<Cube> device,
                                                               List<List<RuleMatch>> exact,
                                                               RuleAction[] classAction, TargetProfile t) {
        int n = e.size();
        List<List<DeviceMatch.Relaxed>> out = new ArrayList<>(n);
        int[] zeroEntry = new int[2];
        long[][] zero = new long[2][Field.COUNT];
        for (int f = 0; f < 2; f++) {
            zero[f][Field.ETH_TYPE.ordinal()] = f == 0 ? Field.ETH_IP4 : Field.ETH_IP6;
            zeroEntry[f] = -1;
            for (int i = 0; i < n && zeroEntry[f] < 0; i++) {
                if (e.cubes.get(i).matches(zero[f])) {
                    zeroEntry[f] = i;
                }
            }
        }
        List<Cube> recent = new ArrayList<>();
        boolean laterIpv6Punted = t.l4InFirstFragments();
        for (int i = 0; i < n; i++) {
            List<DeviceMatch.Relaxed> pre = new ArrayList<>(0);
            if (DeviceMatch.fragmentBlind(device.get(i), t)) {
                pre.add(DeviceMatch.fragmentPunt(device.get(i), t));
            }
            Cube c = device.get(i);
            if (!laterIpv6Punted && c.get(Field.IP_PROTO) != null
                    && (c.get(Field.ETH_TYPE) == null || IntervalSet.contains(c.get(Field.ETH_TYPE), Field.ETH_IP6))) {
                pre.add(DeviceMatch.laterIpv6FragmentPunt(t));
                laterIpv6Punted = true;
            }
            for (int f = 0; f < 2; f++) {
                if (zeroEntry[f] == i && exact.get(i) != null
                        && classAction[e.classOf(i)].type() != RuleAction.Type.DROP) {
                    Cube z = Cube.ALL;
                    for (Field fd : Field.values()) {
                        if (fd != Field.ETH_SRC && fd != Field.ETH_DST) {
                            z = z.with(fd, IntervalSet.point(zero[f][fd.ordinal()]));
                        }
                    }
                    pre.add(DeviceMatch.relaxed(z, t));
                }
            }
            List<DeviceMatch.Relaxed> kept = new ArrayList<>(pre.size());
            for (DeviceMatch.Relaxed r : pre) {
                if (r != null && covered(r.cube, recent)) {
                    continue;
                }
                kept.add(r);
                if (r != null) {
                    recent.add(r.cube);
                    if (recent.size() > PUNT_LOOKBACK) {
                        recent.remove(0);
                    }
                }
            }
            out.add(kept);
        }
        return out;
    }

    private static boolean covered(Cube c, List<Cube> cubes) {
        for (Cube d : cubes) {
            if (c.subsetOf(d)) {
                return true;
            }
        }
        return false;
    }

    /** How far back {@link #widen} looks for an entry that claims the extra packets. */
    static final int WIDEN_LOOKBACK = 32;

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
        Cube extra = wide.with(Field.IP_OFFSET, org.metron.synth.hs.IntervalSet.point(1));
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

    private static List<Integer> ids(List<ClassInfo> cs) {
        List<Integer> out = new ArrayList<>();
        cs.forEach(c -> out.add(c.id));
        return out;
    }

    /** What the device does with a class's packets when it holds the class's entries. */
    private static RuleAction action(ClassInfo c, TargetProfile t) {
        if (c.drops()) {
            return RuleAction.drop();
        }
        boolean stateless = c.stateful.isEmpty();
        boolean writable = c.ttlDec <= 1 && (c.ttlDec == 0 || t.writable().contains(MatchField.IP_TTL));
        for (Field f : c.writes.keySet()) {
            writable &= t.writable().contains(f.matchField());
        }
        if (stateless && writable && t.canEgress()) {
            return RuleAction.toEgress(c.egress, writes(c), c.ttlDec > 0);
        }
        return RuleAction.toServer(c.id);
    }

    private static List<HeaderWrite> writes(ClassInfo c) {
        List<HeaderWrite> out = new ArrayList<>();
        c.writes.forEach((f, v) -> out.add(HeaderWrite.of(f.matchField(), f == Field.VLAN ? Long.toString(v)
                : ClickEmitter.mac(v))));
        return out;
    }

    private static List<TrafficClass> classes(Synthesis syn, List<String> egress, String[] fwdText,
                                              String[] replyText) {
        List<List<String>> filters = new ArrayList<>();
        for (int i = 0; i < syn.classes.size(); i++) {
            filters.add(new ArrayList<>());
        }
        for (int i = 0; i < syn.forward.size(); i++) {
            filters.get(syn.forward.classOf(i)).add(fwdText[i]);
        }
        for (int i = 0; i < syn.reply.size(); i++) {
            filters.get(syn.reply.classOf(i)).add(replyText[i]);
        }
        List<TrafficClass> out = new ArrayList<>();
        for (ClassInfo c : syn.classes) {
            StringBuilder ops = new StringBuilder(c.reply ? "reply: " : "");
            if (c.drops()) {
                ops.append("drop");
            } else {
                if (c.repliesThroughRewriter()) {
                    ops.append("restore by input 1 of the SynthRewriter of '").append(c.stateful).append("'; ");
                } else if (!c.stateful.isEmpty()) {
                    ops.append(c.stateful).append("; ");
                }
                c.writes.forEach((f, v) -> ops.append("set ").append(f.matchField()).append(' ')
                        .append(f == Field.VLAN ? Long.toString(v) : ClickEmitter.mac(v)).append("; "));
                if (c.ttlDec > 0) {
                    ops.append("dec-ttl x").append(c.ttlDec).append("; ");
                }
                if (c.box != null) {
                    ops.append("black box ").append(c.box.nf).append(" (").append(c.box.spec.declared())
                            .append("), then classified again in software into ").append(c.box.after.classes.size())
                            .append(" classes");
                } else {
                    ops.append("egress ").append(c.egress).append(" (").append(egress.get(c.egress)).append(")");
                }
            }
            out.add(new TrafficClass(c.id, filters.get(c.id), c.egress, writes(c), c.ttlDec > 0, c.stateful,
                    ops.toString()));
        }
        return out;
    }
}
