package org.metron.synth.compile;

import org.metron.synth.core.Synthesis;
import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.hs.CubeText;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The part of a group config from a black box on (docs/blackbox.md): the {@code BlackBoxNF} element, a software
 * classifier over the entries of the chain after the box (the switch classified the packets before it, and the
 * box may have rewritten what it declares), and one pipeline per class after it: its stateful steps, its tail, to
 * an egress or into the next box. Classes of a group that reach the same box with the same operation share one
 * box (one NF instance per group); each box's names start with its own, so boxes after boxes nest.
 */
final class BoxEmitter {
    private BoxEmitter() {
    }

    /** The {@code BlackBoxNF} element a class's packets go to, among the names of {@code scope}. */
    static String name(String scope, ClassInfo c) {
        return scope + "bb_" + c.box.nf.replaceAll("[^A-Za-z0-9_]", "_") + "_"
                + Integer.toHexString(c.stateful.hashCode());
    }

    /**
     * Declares, once per box, the boxes the classes' packets go to and everything after them. Click names must be
     * declared before use: this comes before the lines that lead into the boxes.
     */
    static void declare(StringBuilder sb, List<ClassInfo> classes, String scope, List<String> egress) {
        Set<String> done = new HashSet<>();
        for (ClassInfo c : classes) {
            if (c.box != null && done.add(name(scope, c))) {
                declareOne(sb, c, name(scope, c), egress);
            }
        }
    }

    private static void declareOne(StringBuilder sb, ClassInfo c, String name, List<String> egress) {
        Synthesis after = c.box.after;
        String inner = name + "_";
        declare(sb, after.classes, inner, egress);
        StringBuilder extra = new StringBuilder();
        for (ClassInfo pc : after.classes) {
            if (pc.drops()) {
                continue;
            }
            sb.append(inner).append('p').append(pc.id).append(" :: Counter");
            ClickEmitter.stateful(sb, pc, "_" + inner + pc.id, extra);
            sb.append(ClickEmitter.tail(pc, egress, true, inner)).append(";\n");
        }
        sb.append(extra);
        sb.append(name).append(" :: ").append(c.box.spec.element(c.box.nf)).append(";\n");
        String[] text = CubeText.formatAll(after.forward.cubes);
        sb.append(name).append(" -> Strip(14) -> CheckIPHeader -> ").append(inner).append("c :: IPClassifier(");
        for (int j = 0; j < text.length; j++) {
            sb.append(j > 0 ? ",\n    " : "\n    ").append(text[j]);
        }
        sb.append(");\n");
        for (int j = 0; j < text.length; j++) {
            ClassInfo pc = after.classes.get(after.forward.classOf(j));
            sb.append(inner).append("c[").append(j).append("] -> ")
                    .append(pc.drops() ? "Discard" : inner + "p" + pc.id).append(";\n");
        }
    }
}
