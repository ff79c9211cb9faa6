package org.metron.synth.compile;

import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.core.SynthOps;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.CubeText;
import org.metron.synth.hs.Field;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes group configs in the dialect of docs/contracts.md: packets enter at {@code input} as Ethernet frames
 * whose dst MAC carries the class in bytes 4-5, and leave at {@code [k]output}. A group whose classes share
 * one tail is a straight line; otherwise a tag Classifier picks each class's tail; the classifying group
 * also sends unclassified packets through an IPClassifier over the entries left to software.
 */
final class ClickEmitter {
    private ClickEmitter() {
    }

    /**
     * A group of classes with the same stateful operation; {@code guard} (null: none; {entry, class or -1}, see
     * GroupGuards#guard) is what its forward packets pass first, for punts sent to the group's classes: an IPFilter
     * over those entries whose outputs tag packets with their class (when the group has several) and join again;
     * {@code replyGuard} the same for its reply packets (over the reply entries).
     */
    static String group(List<ClassInfo> classes, List<int[]> guard, String[] text, List<int[]> replyGuard,
                        String[] replyText, List<String> egress) {
        StringBuilder sb = new StringBuilder();
        ClassInfo first = classes.get(0);
        sb.append("// classes ").append(ids(classes)).append(first.stateful.isEmpty() ? "" : ": " + first.stateful)
                .append('\n');
        BoxEmitter.declare(sb, classes, "", egress);
        StringBuilder extra = new StringBuilder();
        if (classes.stream().anyMatch(c -> c.reply)) {
            List<ClassInfo> fwd = direction(classes, false);
            List<ClassInfo> rep = direction(classes, true);
            sb.append("rw :: SynthRewriter(").append(rewriterArgs(fwd.get(0))).append(");\n");
            sb.append("input -> dir :: Classifier(");
            for (ClassInfo c : rep) {
                sb.append(tagPattern(c.id)).append(", ");
            }
            sb.append("-);\n");
            for (int i = 0; i < rep.size(); i++) {
                sb.append("dir[").append(i).append("] -> Strip(14) -> CheckIPHeader -> ")
                        .append(replyGuard == null ? "[1]rw" : i == 0 ? "rguard_in :: Counter" : "rguard_in")
                        .append(";\n");
            }
            if (replyGuard != null) {
                sb.append(guarded("rguard_in", replyGuard, replyText, "rguard", rep.size() > 1, Map.of(), Set.of()))
                        .append(" -> [1]rw;\n");
            }
            sb.append(guarded("dir[" + rep.size() + "] -> Strip(14) -> CheckIPHeader", guard, text, "guard",
                    fwd.size() > 1, Map.of(), Set.of()));
            beforeRewrite(sb, fwd.get(0), "", extra);
            sb.append(" -> [0]rw;\n");
            demux(sb, "rw[0]", "fwd", fwd, egress);
            demux(sb, "rw[1]", "rep", rep, egress);
            return sb.append(extra).toString();
        }
        sb.append(guarded("input -> Strip(14) -> CheckIPHeader", guard, text, "guard", classes.size() > 1, Map.of(),
                Set.of()));
        stateful(sb, first, "", extra);
        boolean same = classes.stream().allMatch(c -> tail(c, egress, false).equals(tail(first, egress, false)));
        if (same) {
            sb.append(tail(first, egress, true)).append(";\n");
            return sb.append(extra).toString();
        }
        sb.append(" -> Unstrip(14) -> tag :: Classifier(");
        for (int i = 0; i < classes.size(); i++) {
            sb.append(i > 0 ? ", " : "").append(tagPattern(classes.get(i).id));
        }
        sb.append(");\n");
        for (int i = 0; i < classes.size(); i++) {
            ClassInfo c = classes.get(i);
            sb.append("tag[").append(i).append("]");
            if (needsIp(c)) {
                sb.append(" -> Strip(14) -> CheckIPHeader");
                sb.append(tail(c, egress, true));
            } else {
                sb.append(tail(c, egress, false));
            }
            sb.append(";\n");
        }
        return sb.append(extra).toString();
    }

    /**
     * The classifying group: tagged classes go straight to their pipelines, unclassified packets
     * ({@link org.metron.synth.TrafficClass#UNCLASSIFIED}, replies
     * {@link org.metron.synth.TrafficClass#REPLY_UNCLASSIFIED}) through the software classifiers. Classes of
     * an operation that replies use ({@code answered}) share one SynthRewriter, forward at input 0 and replies
     * at input 1; packets the software classified are tagged with their class first, so the tails after the
     * shared rewriter can be told apart.
     */
    static String classifying(List<ClassInfo> classes, Map<Integer, List<int[]>> guards, String[] text,
                              String[] replyText, List<String> swEntries, List<Integer> swClass,
                              List<String> swReplyEntries, List<Integer> swReplyClass, Set<String> answered,
                              List<String> egress) {
        StringBuilder sb = new StringBuilder();
        sb.append("// software classifier group: classes ").append(ids(classes)).append('\n');
        BoxEmitter.declare(sb, classes, "", egress);
        // class pipelines first: Click names must be declared before use
        StringBuilder extra = new StringBuilder();
        Map<String, List<ClassInfo>> shared = new LinkedHashMap<>();
        for (ClassInfo c : classes) {
            if (!c.drops() && answered.contains(c.stateful)) {
                shared.computeIfAbsent(c.stateful, k -> new ArrayList<>()).add(c);
                continue;
            }
            sb.append("c").append(c.id).append(" :: Counter");
            stateful(sb, c, "_" + c.id, extra);
            sb.append(tail(c, egress, true)).append(";\n");
        }
        Set<Integer> retag = new HashSet<>();
        int k = 0;
        for (List<ClassInfo> op : shared.values()) {
            List<ClassInfo> fwd = direction(op, false);
            List<ClassInfo> rep = direction(op, true);
            String rw = "rw_op" + k;
            sb.append(rw).append(" :: SynthRewriter(").append(rewriterArgs(fwd.get(0))).append(");\n");
            for (ClassInfo c : fwd) {
                sb.append("c").append(c.id).append(" :: Counter");
                beforeRewrite(sb, c, "_" + c.id, extra);
                sb.append(" -> [0]").append(rw).append(";\n");
            }
            for (ClassInfo c : rep) {
                sb.append("c").append(c.id).append(" :: Counter -> [1]").append(rw).append(";\n");
            }
            demux(sb, rw + "[0]", rw + "_fwd", fwd, egress);
            demux(sb, rw + "[1]", rw + "_rep", rep, egress);
            op.forEach(c -> retag.add(c.id));
            k++;
        }
        sb.append(extra);
        sb.append("input -> tag :: Classifier(");
        for (ClassInfo c : classes) {
            sb.append(tagPattern(c.id)).append(", ");
        }
        if (!swReplyEntries.isEmpty()) {
            sb.append(tagPattern(org.metron.synth.TrafficClass.REPLY_UNCLASSIFIED)).append(", ");
        }
        sb.append("-);\n");
        for (int i = 0; i < classes.size(); i++) {
            ClassInfo c = classes.get(i);
            String from = "tag[" + i + "] -> Strip(14) -> CheckIPHeader";
            List<int[]> g = guards.get(c.id);
            if (g == null) {
                sb.append(from).append(" -> c").append(c.id).append(";\n");
            } else {
                Map<Integer, String> heads = new HashMap<>();
                classes.forEach(x -> heads.put(x.id, "c" + x.id));
                sb.append(guarded(from, g, c.reply ? replyText : text, "guard" + c.id, false, heads, retag));
            }
        }
        int next = classes.size();
        Set<Integer> here = new HashSet<>();
        classes.forEach(c -> here.add(c.id));
        if (!swReplyEntries.isEmpty()) {
            softwareClassifier(sb, "tag[" + next++ + "]", "swr", swReplyEntries, swReplyClass, here, retag);
        }
        if (swEntries.isEmpty()) {
            sb.append("tag[").append(next).append("] -> Discard;\n");
        } else {
            softwareClassifier(sb, "tag[" + next + "]", "sw", swEntries, swClass, here, retag);
        }
        return sb.toString();
    }

    /**
     * {@code from} through a guard (see {@link #group}); returns the text to continue the chain from: {@code
     * from} itself without a guard, else the guard, its outputs (tagged with their class when {@code tagAll},
     * or for classes in {@code retag}) joining at a Counter, or, with {@code heads}, going to each class's named
     * pipeline (then nothing is left to continue: the returned text ends the statement).
     */
    private static String guarded(String from, List<int[]> guard, String[] text, String name, boolean tagAll,
                                  Map<Integer, String> heads, Set<Integer> retag) {
        if (guard == null) {
            return from;
        }
        List<Integer> targets = new ArrayList<>();
        StringBuilder sb = new StringBuilder(from).append(" -> ").append(name).append(" :: IPFilter(");
        for (int k = 0; k < guard.size(); k++) {
            int target = guard.get(k)[1];
            if (target >= 0 && !targets.contains(target)) {
                targets.add(target);
            }
            sb.append(k > 0 ? ",\n    " : "\n    ").append(target < 0 ? "deny" : Integer.toString(targets.indexOf(target)))
                    .append(' ').append(text[guard.get(k)[0]]);
        }
        sb.append(");\n");
        String join = name + "_ok";
        for (int k = 0; k < targets.size(); k++) {
            int c = targets.get(k);
            sb.append(name).append('[').append(k).append(']');
            if (tagAll || retag.contains(c)) {
                sb.append(" -> Unstrip(14) -> StoreEtherAddress(").append(mac(0x024d00000000L | c))
                        .append(", dst) -> Strip(14) -> CheckIPHeader");
            }
            if (heads.isEmpty()) {
                sb.append(" -> ").append(join).append(k == 0 ? " :: Counter" : "").append(";\n");
            } else {
                sb.append(" -> ").append(heads.get(c)).append(";\n");
            }
        }
        return heads.isEmpty() ? sb.append(join).toString() : sb.toString();
    }

    private static void softwareClassifier(StringBuilder sb, String from, String name, List<String> entries,
                                           List<Integer> cls, Set<Integer> here, Set<Integer> retag) {
        sb.append(from).append(" -> Strip(14) -> CheckIPHeader -> ").append(name).append(" :: IPClassifier(");
        for (int j = 0; j < entries.size(); j++) {
            sb.append(j > 0 ? ",\n    " : "\n    ").append(entries.get(j));
        }
        sb.append(");\n");
        for (int j = 0; j < entries.size(); j++) {
            int c = cls.get(j);
            sb.append(name).append('[').append(j).append("]");
            if (!here.contains(c)) {
                // a class settled on the device: no punted packet belongs to it (ClassGrouping.software)
                sb.append(" -> Discard;\n");
                continue;
            }
            if (retag.contains(c)) {
                sb.append(" -> Unstrip(14) -> StoreEtherAddress(").append(mac(0x024d00000000L | c))
                        .append(", dst) -> Strip(14) -> CheckIPHeader");
            }
            sb.append(" -> c").append(c).append(";\n");
        }
    }

    private static List<ClassInfo> direction(List<ClassInfo> classes, boolean reply) {
        List<ClassInfo> out = new ArrayList<>();
        classes.stream().filter(c -> c.reply == reply).forEach(out::add);
        return out;
    }

    /** From an IP-marked rewriter output, each class's tail: straight if they share one, else by class tag. */
    private static void demux(StringBuilder sb, String from, String name, List<ClassInfo> classes,
                              List<String> egress) {
        if (classes.isEmpty()) {
            sb.append(from).append(" -> Discard;\n");
            return;
        }
        ClassInfo first = classes.get(0);
        if (classes.stream().allMatch(c -> tail(c, egress, false).equals(tail(first, egress, false)))) {
            sb.append(from).append(tail(first, egress, true)).append(";\n");
            return;
        }
        sb.append(from).append(" -> Unstrip(14) -> ").append(name).append(" :: Classifier(");
        for (int i = 0; i < classes.size(); i++) {
            sb.append(i > 0 ? ", " : "").append(tagPattern(classes.get(i).id));
        }
        sb.append(");\n");
        for (int i = 0; i < classes.size(); i++) {
            ClassInfo c = classes.get(i);
            sb.append(name).append('[').append(i).append("]");
            if (needsIp(c)) {
                sb.append(" -> Strip(14) -> CheckIPHeader").append(tail(c, egress, true));
            } else {
                sb.append(tail(c, egress, false));
            }
            sb.append(";\n");
        }
    }

    private static String ids(List<ClassInfo> classes) {
        StringBuilder sb = new StringBuilder();
        for (ClassInfo c : classes) {
            sb.append(sb.length() > 0 ? "," : "").append(c.id);
        }
        return sb.toString();
    }

    /** Classifier pattern on the class bits (dst MAC bytes 4-5). */
    static String tagPattern(int classId) {
        return String.format("4/%04x", classId);
    }

    /** Appends the class's stateful elements (DPI first: it only reads the payload); extra gets side branches. */
    static void stateful(StringBuilder sb, ClassInfo c, String suffix, StringBuilder extra) {
        if (c.drops()) {
            return;
        }
        beforeRewrite(sb, c, suffix, extra);
        if (!SynthOps.pool(c.steps).isEmpty()) {
            sb.append(" -> rw").append(suffix).append(" :: SynthRewriter(").append(rewriterArgs(c)).append(")");
        }
    }

    /** SynthRewriter arguments of a forward class's composed pool. */
    private static String rewriterArgs(ClassInfo c) {
        return SynthOps.rewriterArgs(SynthOps.pool(c.steps), SynthOps.select(c.steps), SynthOps.capacity(c.steps),
                SynthOps.timeouts(c.steps));
    }

    /** The stateful work of a forward class before its rewriter (SpinCycles, DPI). */
    private static void beforeRewrite(StringBuilder sb, ClassInfo c, String suffix, StringBuilder extra) {
        long spin = SynthOps.spinCycles(c.steps);
        if (spin > 0) {
            sb.append(" -> spin").append(suffix).append(" :: SpinCycles(CYCLES ").append(spin).append(")");
        }
        List<String> sigs = SynthOps.signatures(c.steps);
        if (!sigs.isEmpty()) {
            sb.append(" -> dpi").append(suffix).append(" :: HyperscanDPI(");
            for (int i = 0; i < sigs.size(); i++) {
                sb.append(i > 0 ? ", " : "").append('"').append(sigs.get(i).replace("\"", "\\\"")).append('"');
            }
            // Block mode: the reference interpreter and the equivalence checker match each packet alone (Dpi), so
            // the synthesized element must too; the agent's default, stream mode per TCP flow, would match across
            // segments and hold out-of-order ones, which the checker does not model (yet).
            sb.append(", MODE BLOCK)");
            extra.append("dpi").append(suffix).append("[1] -> Discard;\n");
        }
    }

    private static boolean needsIp(ClassInfo c) {
        return !c.drops() && c.ttlDec > 0;
    }

    /** Stateless tail from an IP-marked packet (ipMarked) or from an Ethernet frame, to the egress. */
    private static String tail(ClassInfo c, List<String> egress, boolean ipMarked) {
        return tail(c, egress, ipMarked, "");
    }

    /**
     * As {@link #tail(ClassInfo, List, boolean)}; a class that goes to a black box ends there instead of at an
     * egress: at its {@code BlackBoxNF} among the names of {@code scope} ({@link BoxEmitter}).
     */
    static String tail(ClassInfo c, List<String> egress, boolean ipMarked, String scope) {
        if (c.drops()) {
            return " -> Discard";
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < c.ttlDec; i++) {
            sb.append(" -> DecIPTTL");
        }
        if (ipMarked) {
            sb.append(" -> Unstrip(14)");
        }
        Long src = c.writes.get(Field.ETH_SRC);
        Long dst = c.writes.get(Field.ETH_DST);
        if (src != null && dst != null) {
            sb.append(" -> EtherRewrite(").append(mac(src)).append(", ").append(mac(dst)).append(")");
        }
        for (Map.Entry<Field, Long> w : c.writes.entrySet()) {
            if (src != null && dst != null && (w.getKey() == Field.ETH_SRC || w.getKey() == Field.ETH_DST)) {
                continue;
            }
            switch (w.getKey()) {
                case ETH_SRC:
                    sb.append(" -> StoreEtherAddress(").append(mac(w.getValue())).append(", src)");
                    break;
                case ETH_DST:
                    sb.append(" -> StoreEtherAddress(").append(mac(w.getValue())).append(", dst)");
                    break;
                case VLAN:
                    sb.append(w.getValue() == 0 ? " -> VLANDecap" : " -> VLANEncap(VLAN_ID " + w.getValue() + ")");
                    break;
                default:
                    throw new IllegalStateException("no stateless write element for " + w.getKey());
            }
        }
        if (c.box != null) {
            return sb.append(" -> ").append(BoxEmitter.name(scope, c)).toString();
        }
        sb.append(" -> [").append(c.egress).append("]output");
        return sb.toString();
    }

    static String mac(long v) {
        return String.format("%02x:%02x:%02x:%02x:%02x:%02x", (v >>> 40) & 0xff, (v >>> 32) & 0xff,
                (v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
    }
}
