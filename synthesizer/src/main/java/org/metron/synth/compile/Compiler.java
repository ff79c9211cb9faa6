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

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        public final int softwareEntries;

        Result(List<TrafficClass> classes, List<ClassGroup> groups, List<OffloadRule> rules, int softwareEntries) {
            this.classes = classes;
            this.groups = groups;
            this.rules = rules;
            this.softwareEntries = softwareEntries;
        }
    }

    private Compiler() {
    }

    /** Compiles a synthesis for a target. */
    public static Result compile(Synthesis syn, TargetProfile t, List<String> egress) {
        int n = syn.entries.size();
        String[] text = new String[n];
        for (int i = 0; i < n; i++) {
            text[i] = CubeText.format(syn.entries.get(i));
        }
        RuleAction[] classAction = new RuleAction[syn.classes.size()];
        for (ClassInfo c : syn.classes) {
            classAction[c.id] = action(c, t);
        }
        // what the device is asked to match per entry: the entry, or a wider cube whose extra packets an
        // earlier entry already claims (first match makes them unreachable here)
        List<Cube> device = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            device.add(widen(syn.entries, i));
        }
        // exact device matches per entry; null = the target cannot hold this entry as it is
        List<List<RuleMatch>> exact = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            exact.add(t.capacity() == 0 ? null : DeviceMatch.of(device.get(i), t));
        }
        // priority tiers: consecutive entries that pairwise do not overlap share a priority; an entry the device
        // cannot hold gets a tier of its own (its punt rule below is a superset that may overlap anything)
        int[] tier = new int[n];
        int cur = 0;
        int tierStart = 0;
        for (int i = 0; i < n; i++) {
            boolean newTier = i > 0 && (i - tierStart >= MAX_TIER || exact.get(i) == null
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
        List<OffloadRule> rules = new ArrayList<>();
        boolean[] offloaded = new boolean[n];
        int budget = t.capacity() - 1;
        int firstPunt = n;
        for (int i = 0; i < n; i++) {
            int prio = TOP_PRIORITY - tier[i];
            List<RuleMatch> m = exact.get(i);
            if (m != null && m.size() <= budget) {
                RuleAction a = classAction[syn.entryClass(i)];
                for (RuleMatch rm : m) {
                    rules.add(OffloadRule.of(prio, rm, a));
                }
                budget -= m.size();
                offloaded[i] = true;
                continue;
            }
            firstPunt = Math.min(firstPunt, i);
            List<RuleMatch> punt = t.capacity() == 0 ? null : DeviceMatch.relaxed(device.get(i), t);
            if (punt == null || punt.size() > budget) {
                break;
            }
            for (RuleMatch rm : punt) {
                rules.add(OffloadRule.of(prio, rm, RuleAction.toServer(TrafficClass.UNCLASSIFIED)));
            }
            budget -= punt.size();
        }
        if (firstPunt < n && t.capacity() > 0) {
            rules.add(OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.toServer(TrafficClass.UNCLASSIFIED)));
        }
        int softwareEntries = n - firstPunt;
        boolean[] viaSoftware = new boolean[syn.classes.size()];
        List<String> swEntries = new ArrayList<>();
        List<Integer> swClass = new ArrayList<>();
        for (int i = firstPunt; i < n; i++) {
            viaSoftware[syn.entryClass(i)] = true;
            swEntries.add(text[i]);
            swClass.add(syn.entryClass(i));
        }
        // groups
        List<ClassGroup> groups = new ArrayList<>();
        List<ClassInfo> swClasses = new ArrayList<>();
        Map<String, List<ClassInfo>> byKey = new LinkedHashMap<>();
        for (ClassInfo c : syn.classes) {
            if (viaSoftware[c.id]) {
                swClasses.add(c);
            } else if (classAction[c.id].type() == RuleAction.Type.TO_SERVER) {
                byKey.computeIfAbsent(c.stateful, k -> new ArrayList<>()).add(c);
            }
        }
        if (!swClasses.isEmpty()) {
            String key = swClasses.stream().allMatch(c -> c.stateful.equals(swClasses.get(0).stateful))
                    ? swClasses.get(0).stateful : "";
            groups.add(new ClassGroup(0, ids(swClasses), ClickEmitter.classifying(swClasses, swEntries, swClass,
                    egress), key, true));
        }
        for (Map.Entry<String, List<ClassInfo>> e : byKey.entrySet()) {
            groups.add(new ClassGroup(groups.size(), ids(e.getValue()), ClickEmitter.group(e.getValue(), egress),
                    e.getKey(), false));
        }
        return new Result(classes(syn, egress, text), groups, rules, softwareEntries);
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

    private static List<TrafficClass> classes(Synthesis syn, List<String> egress, String[] text) {
        List<List<String>> filters = new ArrayList<>();
        for (int i = 0; i < syn.classes.size(); i++) {
            filters.add(new ArrayList<>());
        }
        for (int i = 0; i < syn.entries.size(); i++) {
            filters.get(syn.entryClass(i)).add(text[i]);
        }
        List<TrafficClass> out = new ArrayList<>();
        for (ClassInfo c : syn.classes) {
            StringBuilder ops = new StringBuilder();
            if (c.drops()) {
                ops.append("drop");
            } else {
                if (!c.stateful.isEmpty()) {
                    ops.append(c.stateful).append("; ");
                }
                c.writes.forEach((f, v) -> ops.append("set ").append(f.matchField()).append(' ')
                        .append(f == Field.VLAN ? Long.toString(v) : ClickEmitter.mac(v)).append("; "));
                if (c.ttlDec > 0) {
                    ops.append("dec-ttl x").append(c.ttlDec).append("; ");
                }
                ops.append("egress ").append(c.egress).append(" (").append(egress.get(c.egress)).append(")");
            }
            out.add(new TrafficClass(c.id, filters.get(c.id), c.egress, writes(c), c.ttlDec > 0, c.stateful,
                    ops.toString()));
        }
        return out;
    }
}
