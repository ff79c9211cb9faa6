package org.metron.synth.json;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TrafficClass;

import java.util.List;

/**
 * JSON form of a compiled chain, as the CLI writes it: {@code classes.json} (traffic classes and groups) and
 * {@code rules.json} (offload rules, highest priority first, each naming the filter entry it came from). Field
 * names follow the Java API.
 */
public final class CompiledChainJson {
    private CompiledChainJson() {
    }

    private static ObjectNode object() {
        return JsonText.MAPPER.createObjectNode();
    }

    private static ArrayNode strings(List<?> values) {
        ArrayNode a = JsonText.MAPPER.createArrayNode();
        values.forEach(v -> a.add(v.toString()));
        return a;
    }

    private static ArrayNode ints(List<Integer> values) {
        ArrayNode a = JsonText.MAPPER.createArrayNode();
        values.forEach(a::add);
        return a;
    }

    /** Classes, groups (without their Click text, which goes to its own files), egress and stats. */
    public static String classes(CompiledChain c) {
        ObjectNode top = object();
        top.put("chain", c.name());
        top.put("target", c.target().name());
        top.set("egress", strings(c.egress()));
        ArrayNode cls = top.putArray("classes");
        for (TrafficClass t : c.classes()) {
            ObjectNode m = cls.addObject();
            m.put("id", t.id());
            m.put("operations", t.operations());
            m.put("egress", t.egress());
            m.put("statefulKey", t.statefulKey());
            m.set("statelessWrites", strings(t.statelessWrites()));
            m.put("decTtl", t.decTtl());
            m.set("filters", strings(t.filters()));
            if (c.replyAnswers().containsKey(t.id())) {
                m.set("answers", ints(c.replyAnswers().get(t.id())));
            }
        }
        ArrayNode gs = top.putArray("groups");
        for (ClassGroup g : c.groups()) {
            ObjectNode m = gs.addObject();
            m.put("id", g.id());
            m.set("classIds", ints(g.classIds()));
            m.put("statefulKey", g.statefulKey());
            m.put("classifies", g.classifies());
            m.put("clickConfig", "group-" + g.id() + ".click");
        }
        ObjectNode st = top.putObject("stats");
        st.put("classes", c.stats().classes());
        st.put("entries", c.stats().entries());
        st.put("rulesOffloaded", c.stats().rulesOffloaded());
        st.put("entriesInSoftware", c.stats().rulesSoftware());
        ObjectNode ph = st.putObject("phaseMillis");
        c.stats().phaseNanos().forEach((k, v) -> ph.put(k, v / 1e6));
        return JsonText.write(top);
    }

    /** Offload rules, highest priority first; {@code replyRules} too when the chain has a reply ingress. */
    public static String rules(CompiledChain c) {
        ObjectNode top = object();
        top.put("chain", c.name());
        top.put("target", c.target().name());
        top.set("rules", rules(c.offloadRules()));
        if (!c.replyRules().isEmpty()) {
            top.set("replyRules", rules(c.replyRules()));
        }
        return JsonText.write(top);
    }

    private static ArrayNode rules(List<OffloadRule> rules) {
        ArrayNode out = JsonText.MAPPER.createArrayNode();
        for (OffloadRule r : rules) {
            ObjectNode m = out.addObject();
            m.put("priority", r.priority());
            m.set("match", match(r.match()));
            m.set("action", action(r.action()));
            if (r.sourceClass() != OffloadRule.NO_SOURCE) {
                m.putObject("from").put("class", r.sourceClass()).put("entry", r.sourceEntry());
            }
        }
        return out;
    }

    private static ObjectNode match(RuleMatch m) {
        ObjectNode o = object();
        m.ethType().ifPresent(v -> o.put("ethType", String.format("0x%04x", v)));
        m.vlan().ifPresent(v -> o.put("vlan", v));
        m.ipProto().ifPresent(v -> o.put("ipProto", v));
        m.ipSrc().ifPresent(v -> o.put("ipSrc", v.toString()));
        m.ipDst().ifPresent(v -> o.put("ipDst", v.toString()));
        m.l4Src().ifPresent(v -> range(o, "l4Src", v));
        m.l4Dst().ifPresent(v -> range(o, "l4Dst", v));
        m.tcpFlags().ifPresent(v -> o.put("tcpFlags", v.toString()));
        m.tos().ifPresent(v -> o.put("tos", v.toString()));
        m.ttl().ifPresent(v -> o.put("ttl", v.toString()));
        m.icmpType().ifPresent(v -> o.put("icmpType", v.toString()));
        m.fragment().ifPresent(v -> o.put("laterFragment", v));
        return o;
    }

    /** A port as a number when exact, value/mask when maskable, else the range's text. */
    private static void range(ObjectNode o, String key, RangeMatch r) {
        if (r.isMaskable() && r.lo() == r.hi()) {
            o.put(key, r.lo());
        } else {
            o.put(key, r.isMaskable() ? String.format("0x%04x/0x%04x", r.value(), r.mask()) : r.toString());
        }
    }

    private static ObjectNode action(RuleAction a) {
        ObjectNode o = object();
        o.put("type", a.type().name());
        switch (a.type()) {
            case TO_SERVER:
                o.put("classId", a.classId());
                break;
            case TO_EGRESS:
                o.put("egress", a.egress());
                o.set("writes", strings(a.writes()));
                o.put("decTtl", a.decTtl());
                break;
            default:
                break;
        }
        return o;
    }
}
