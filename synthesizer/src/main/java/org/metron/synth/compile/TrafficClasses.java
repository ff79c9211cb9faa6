package org.metron.synth.compile;

import org.metron.synth.HeaderWrite;
import org.metron.synth.MatchField;
import org.metron.synth.RuleAction;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.metron.synth.core.Synthesis;
import org.metron.synth.core.Synthesis.ClassInfo;
import org.metron.synth.hs.Field;

import java.util.ArrayList;
import java.util.List;

/**
 * The synthesis's classes as the compiled chain lists them: what the device does with a class's packets when it
 * holds the class's entries, and each class with its filters, header writes and operations in words.
 */
final class TrafficClasses {
    private TrafficClasses() {
    }

    /** What the device does with a class's packets when it holds the class's entries. */
    static RuleAction action(ClassInfo c, TargetProfile t) {
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
        c.writes.forEach((f, v) -> out.add(HeaderWrite.of(f.matchField(), value(f, v))));
        return out;
    }

    /** A written field's value as rules and descriptions give it: a VLAN id in decimal, a MAC address. */
    private static String value(Field f, long v) {
        return f == Field.VLAN ? Long.toString(v) : ClickEmitter.mac(v);
    }

    /** Every class, with its entries (forward then reply) as filters. */
    static List<TrafficClass> of(Synthesis syn, List<String> egress, String[] fwdText, String[] replyText) {
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
            out.add(new TrafficClass(c.id, filters.get(c.id), c.egress, writes(c), c.ttlDec > 0, c.stateful,
                    operations(c, egress)));
        }
        return out;
    }

    private static String operations(ClassInfo c, List<String> egress) {
        StringBuilder ops = new StringBuilder(c.reply ? "reply: " : "");
        if (c.drops()) {
            return ops.append("drop").toString();
        }
        if (c.repliesThroughRewriter()) {
            ops.append("restore by input 1 of the SynthRewriter of '").append(c.stateful).append("'; ");
        } else if (!c.stateful.isEmpty()) {
            ops.append(c.stateful).append("; ");
        }
        c.writes.forEach((f, v) -> ops.append("set ").append(f.matchField()).append(' ').append(value(f, v))
                .append("; "));
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
        return ops.toString();
    }
}
