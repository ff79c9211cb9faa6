package org.metron.synth.compile;

import org.metron.synth.core.RewritePattern;
import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.core.SynthOps;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.CubeText;
import org.metron.synth.hs.Field;

import java.util.List;
import java.util.Map;

/**
 * Writes group configs in the dialect of docs/contracts.md: packets enter at {@code input} as Ethernet frames
 * whose dst MAC carries the class in bytes 4-5, and leave at {@code [k]output}. A group whose classes share
 * one tail is a straight line; otherwise a tag Classifier picks each class's tail; the classifying group
 * also sends unclassified packets through an IPClassifier over the entries left to software.
 */
final class ClickEmitter {
    private ClickEmitter() {
    }

    /** A group of classes with the same stateful operation. */
    static String group(List<ClassInfo> classes, List<String> egress) {
        StringBuilder sb = new StringBuilder();
        ClassInfo first = classes.get(0);
        sb.append("// classes ").append(ids(classes)).append(first.stateful.isEmpty() ? "" : ": " + first.stateful)
                .append('\n');
        StringBuilder extra = new StringBuilder();
        sb.append("input -> Strip(14) -> CheckIPHeader");
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
     * ({@link org.metron.synth.TrafficClass#UNCLASSIFIED}) through the software classifier.
     */
    static String classifying(List<ClassInfo> classes, List<String> swEntries, List<Integer> swClass,
                              List<String> egress) {
        StringBuilder sb = new StringBuilder();
        sb.append("// software classifier group: classes ").append(ids(classes)).append('\n');
        // class pipelines first: Click names must be declared before use
        StringBuilder extra = new StringBuilder();
        for (ClassInfo c : classes) {
            sb.append("c").append(c.id).append(" :: Counter");
            stateful(sb, c, "_" + c.id, extra);
            sb.append(tail(c, egress, true)).append(";\n");
        }
        sb.append(extra);
        sb.append("input -> tag :: Classifier(");
        for (ClassInfo c : classes) {
            sb.append(tagPattern(c.id)).append(", ");
        }
        sb.append("-);\n");
        for (int i = 0; i < classes.size(); i++) {
            ClassInfo c = classes.get(i);
            sb.append("tag[").append(i).append("] -> Strip(14) -> CheckIPHeader -> c").append(c.id).append(";\n");
        }
        sb.append("tag[").append(classes.size()).append("] -> Strip(14) -> CheckIPHeader -> sw :: IPClassifier(");
        for (int j = 0; j < swEntries.size(); j++) {
            sb.append(j > 0 ? ",\n    " : "\n    ").append(swEntries.get(j));
        }
        sb.append(");\n");
        for (int j = 0; j < swEntries.size(); j++) {
            sb.append("sw[").append(j).append("] -> c").append(swClass.get(j)).append(";\n");
        }
        return sb.toString();
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
    private static void stateful(StringBuilder sb, ClassInfo c, String suffix, StringBuilder extra) {
        if (c.drops()) {
            return;
        }
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
            sb.append(")");
            extra.append("dpi").append(suffix).append("[1] -> Discard;\n");
        }
        List<RewritePattern> pool = SynthOps.pool(c.steps);
        if (!pool.isEmpty()) {
            sb.append(" -> rw").append(suffix).append(" :: SynthRewriter(")
                    .append(SynthOps.rewriterArgs(pool, SynthOps.select(c.steps))).append(")");
        }
    }

    private static boolean needsIp(ClassInfo c) {
        return !c.drops() && c.ttlDec > 0;
    }

    /** Stateless tail from an IP-marked packet (ipMarked) or from an Ethernet frame, to the egress. */
    private static String tail(ClassInfo c, List<String> egress, boolean ipMarked) {
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
        sb.append(" -> [").append(c.egress).append("]output");
        return sb.toString();
    }

    static String mac(long v) {
        return String.format("%02x:%02x:%02x:%02x:%02x:%02x", (v >>> 40) & 0xff, (v >>> 32) & 0xff,
                (v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
    }
}
