package org.metron.app.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronService;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.GroupLoad;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingOperation;
import org.metron.app.scaling.ScalingService;

import java.util.Locale;

/** JSON of scaling's types for REST and the CLI: the one place their field names are chosen. */
public final class ScalingJson {
    private ScalingJson() {
    }

    /** One chain's scaling view: groups (tag, core, classes), cores, latest load, operation in progress, history. */
    public static ObjectNode chain(MetronService metron, ScalingService scaling, ChainId id) {
        ObjectNode n = MetronJson.MAPPER.createObjectNode();
        n.put("chain", id.name());
        metron.placement(id).ifPresent(p -> {
            n.set("groups", MetronJson.placement(p).get("groups"));
            ArrayNode cores = n.putArray("cores");
            p.cores().forEach(cores::add);
        });
        scaling.load(id).ifPresent(l -> n.set("load", load(l)));
        scaling.ingressPps(id).ifPresent(r -> n.put("ingressPps", r));
        ArrayNode ops = n.putArray("inProgress");
        scaling.inProgress().stream().filter(op -> op.chain().equals(id)).forEach(op -> ops.add(operation(op)));
        ArrayNode h = n.putArray("history");
        scaling.history(id).forEach(e -> h.add(event(e)));
        ArrayNode shed = n.putArray("flowStateAlerts");
        scaling.flowStateAlerts(id).forEach(a -> shed.add(alert(a)));
        return n;
    }

    public static ObjectNode alert(FlowStateAlert a) {
        ObjectNode n = MetronJson.MAPPER.createObjectNode();
        n.put("at", a.atMs());
        n.put("chain", a.chain().name());
        n.put("group", a.group());
        n.put("server", a.server().toString());
        n.put("element", a.element());
        n.put("evicted", a.evicted());
        n.put("refused", a.refused());
        n.put("growthFailures", a.growthFailures());
        n.put("flows", a.flows());
        n.put("capacity", a.capacity());
        return n;
    }

    public static ObjectNode event(ScalingEvent e) {
        ObjectNode n = MetronJson.MAPPER.createObjectNode();
        n.put("at", e.atMs());
        n.put("chain", e.chain().name());
        n.put("kind", e.kind().name().toLowerCase(Locale.ROOT));
        ArrayNode g = n.putArray("groups");
        e.groups().forEach(g::add);
        ArrayNode cb = n.putArray("coresBefore");
        e.coresBefore().forEach(cb::add);
        ArrayNode ca = n.putArray("coresAfter");
        e.coresAfter().forEach(ca::add);
        ArrayNode m = n.putArray("movedClasses");
        e.moved().forEach(m::add);
        n.put("slice", e.slice());
        n.put("reason", e.reason());
        n.put("outcome", e.outcome().name());
        n.put("detail", e.detail());
        n.put("reactionMs", e.reactionMs());
        n.put("durationMs", e.durationMs());
        n.put("steps", e.steps());
        return n;
    }

    public static ObjectNode load(ChainLoad c) {
        ObjectNode n = MetronJson.MAPPER.createObjectNode();
        n.put("chain", c.chain().name());
        n.put("server", c.server());
        n.put("autoScale", c.autoScale());
        n.put("minCores", c.minCores());
        n.put("maxCores", c.maxCores());
        ArrayNode groups = n.putArray("groups");
        for (GroupLoad g : c.groups()) {
            ObjectNode gn = groups.addObject();
            gn.put("id", g.groupId());
            gn.put("core", g.core());
            gn.put("load", g.load());
            ObjectNode rates = gn.putObject("classRates");
            g.classRates().forEach((k, v) -> rates.put(Integer.toString(k), v));
        }
        return n;
    }

    public static ObjectNode operation(ScalingOperation op) {
        ObjectNode n = MetronJson.MAPPER.createObjectNode();
        n.put("chain", op.chain().name());
        n.put("kind", op.kind().name().toLowerCase(Locale.ROOT));
        n.put("step", op.step().name());
        n.put("group", op.group());
        n.put("other", op.other());
        n.set("otherTag", MetronJson.tag(op.otherTag()));
        n.put("otherCore", op.otherCore());
        n.put("startedAt", op.startMs());
        return n;
    }
}
