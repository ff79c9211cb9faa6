package org.metron.synth.json;

import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.HeaderWrite;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TrafficClass;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON form of a compiled chain, as the CLI writes it: {@code classes.json} (traffic classes and groups) and
 * {@code rules.json} (offload rules, highest priority first). Field names follow the Java API.
 */
public final class CompiledChainJson {
    private CompiledChainJson() {
    }

    /** Classes, groups (without their Click text, which goes to its own files), egress and stats. */
    public static String classes(CompiledChain c) {
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("chain", c.name());
        top.put("target", c.target().name());
        top.put("egress", c.egress());
        List<Object> cls = new ArrayList<>();
        for (TrafficClass t : c.classes()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", t.id());
            m.put("operations", t.operations());
            m.put("egress", t.egress());
            m.put("statefulKey", t.statefulKey());
            List<Object> w = new ArrayList<>();
            for (HeaderWrite hw : t.statelessWrites()) {
                w.add(hw.toString());
            }
            m.put("statelessWrites", w);
            m.put("decTtl", t.decTtl());
            m.put("filters", t.filters());
            if (c.replyAnswers().containsKey(t.id())) {
                m.put("answers", c.replyAnswers().get(t.id()));
            }
            cls.add(m);
        }
        top.put("classes", cls);
        List<Object> gs = new ArrayList<>();
        for (ClassGroup g : c.groups()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", g.id());
            m.put("classIds", g.classIds());
            m.put("statefulKey", g.statefulKey());
            m.put("classifies", g.classifies());
            m.put("clickConfig", "group-" + g.id() + ".click");
            gs.add(m);
        }
        top.put("groups", gs);
        Map<String, Object> st = new LinkedHashMap<>();
        st.put("classes", c.stats().classes());
        st.put("entries", c.stats().entries());
        st.put("rulesOffloaded", c.stats().rulesOffloaded());
        st.put("entriesInSoftware", c.stats().rulesSoftware());
        Map<String, Object> ph = new LinkedHashMap<>();
        c.stats().phaseNanos().forEach((k, v) -> ph.put(k, v / 1e6));
        st.put("phaseMillis", ph);
        top.put("stats", st);
        return JsonWriter.write(top);
    }

    /** Offload rules, highest priority first; {@code replyRules} too when the chain has a reply ingress. */
    public static String rules(CompiledChain c) {
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("chain", c.name());
        top.put("target", c.target().name());
        top.put("rules", rules(c.offloadRules()));
        if (!c.replyRules().isEmpty()) {
            top.put("replyRules", rules(c.replyRules()));
        }
        return JsonWriter.write(top);
    }

    private static List<Object> rules(List<OffloadRule> rules) {
        List<Object> out = new ArrayList<>();
        for (OffloadRule r : rules) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("priority", r.priority());
            m.put("match", match(r.match()));
            m.put("action", action(r.action()));
            out.add(m);
        }
        return out;
    }

    private static Map<String, Object> match(RuleMatch m) {
        Map<String, Object> o = new LinkedHashMap<>();
        m.ethType().ifPresent(v -> o.put("ethType", String.format("0x%04x", v)));
        m.vlan().ifPresent(v -> o.put("vlan", v));
        m.ipProto().ifPresent(v -> o.put("ipProto", v));
        m.ipSrc().ifPresent(v -> o.put("ipSrc", v.toString()));
        m.ipDst().ifPresent(v -> o.put("ipDst", v.toString()));
        m.l4Src().ifPresent(v -> o.put("l4Src", range(v)));
        m.l4Dst().ifPresent(v -> o.put("l4Dst", range(v)));
        m.tcpFlags().ifPresent(v -> o.put("tcpFlags", v.toString()));
        m.tos().ifPresent(v -> o.put("tos", v.toString()));
        m.ttl().ifPresent(v -> o.put("ttl", v.toString()));
        m.icmpType().ifPresent(v -> o.put("icmpType", v.toString()));
        m.fragment().ifPresent(v -> o.put("laterFragment", v));
        return o;
    }

    private static Object range(org.metron.synth.RangeMatch r) {
        if (r.isMaskable()) {
            return r.lo() == r.hi() ? (Object) r.lo() : String.format("0x%04x/0x%04x", r.value(), r.mask());
        }
        return r.toString();
    }

    private static Map<String, Object> action(RuleAction a) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("type", a.type().name());
        switch (a.type()) {
            case TO_SERVER:
                o.put("classId", a.classId());
                break;
            case TO_EGRESS:
                o.put("egress", a.egress());
                List<Object> w = new ArrayList<>();
                a.writes().forEach(x -> w.add(x.toString()));
                o.put("writes", w);
                o.put("decTtl", a.decTtl());
                break;
            default:
                break;
        }
        return o;
    }
}
