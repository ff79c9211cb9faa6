package org.metron.app.impl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Translates the original Metron netcfg chain format (shared/design/metron.md §2) into chain JSON:
 * <pre>
 * {"apps": {"org.onosproject.metron.apps": {"add": {"serviceChains": [{
 *    "name", "type", "networkId", "cpuCores", "maxCpuCores", "scale", "autoScale",
 *    "scope": "network-mac" | "network-vlan" | "server-rules" | "server-rss",
 *    "components": [{"name", "class"}],
 *    "processors": [{"name": component, "click": text}
 *                   | {"name": component, "blocks": [{"instance", "block", "configArgs"}],
 *                      "graph": [{"src", "dst", "srcOutputPort", "dstInputPort"}]}],
 *    "topology": {"network": [{"src", "srcInterface", "dst", "dstInterface"}],
 *                 "ingressPoints": [{"deviceId", "port", "nf", "interface"}], "egressPoints": [...]}}]}}}}
 * </pre>
 * Click blocks and graph edges become the NF's Click text inline; rule files on the controller's disk are not
 * read (NF configurations always travel in the request).
 */
final class NetcfgTranslator {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private NetcfgTranslator() {
    }

    /** Whether a body is in netcfg form (an {@code apps} object with a Metron app key). */
    static boolean isNetcfg(JsonNode root) {
        return root.has("apps") && metronApp(root.get("apps")) != null;
    }

    /** Chain JSON documents (trees, read by the synthesizer as they are), one per service chain under {@code add}. */
    static List<ObjectNode> translate(JsonNode root) {
        JsonNode app = metronApp(root.get("apps"));
        JsonNode add = app.get("add");
        if (add == null || !add.path("serviceChains").isArray()) {
            throw bad("apps.<metron app>.add.serviceChains", "must be an array (only 'add' is accepted; remove "
                    + "chains with DELETE)");
        }
        List<ObjectNode> out = new ArrayList<>();
        int i = 0;
        for (JsonNode sc : add.get("serviceChains")) {
            out.add(chain(sc, "serviceChains[" + i++ + "]"));
        }
        return out;
    }

    private static JsonNode metronApp(JsonNode apps) {
        if (apps == null || !apps.isObject()) {
            return null;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = apps.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().contains("metron")) {
                return e.getValue();
            }
        }
        return null;
    }

    private static ObjectNode chain(JsonNode sc, String where) {
        ObjectNode out = MAPPER.createObjectNode();
        out.put("name", text(sc, "name", where));
        ArrayNode nfs = out.putArray("nfs");
        JsonNode processors = sc.path("processors");
        if (!processors.isArray() || processors.size() == 0) {
            throw bad(where + ".processors", "must be a non-empty array");
        }
        int p = 0;
        for (JsonNode proc : processors) {
            String pw = where + ".processors[" + p++ + "]";
            ObjectNode nf = nfs.addObject();
            nf.put("name", text(proc, "name", pw));
            nf.put("click", proc.has("click") ? text(proc, "click", pw) : click(proc, pw));
        }
        JsonNode topo = sc.path("topology");
        ArrayNode links = out.putArray("links");
        int l = 0;
        for (JsonNode edge : topo.path("network")) {
            String lw = where + ".topology.network[" + l++ + "]";
            ObjectNode link = links.addObject();
            link.put("from", text(edge, "src", lw) + "." + text(edge, "srcInterface", lw));
            link.put("to", text(edge, "dst", lw) + "." + text(edge, "dstInterface", lw));
        }
        JsonNode ins = points(topo, "ingressPoints", where);
        JsonNode outs = points(topo, "egressPoints", where);
        ArrayNode ingress = out.putArray("ingress");
        ins.forEach(n -> ingress.add(text(n, "nf", where + ".ingressPoints") + "."
                + text(n, "interface", where + ".ingressPoints")));
        ArrayNode egress = out.putArray("egress");
        outs.forEach(n -> egress.add(text(n, "nf", where + ".egressPoints") + "."
                + text(n, "interface", where + ".egressPoints")));

        ObjectNode dep = out.putObject("deployment");
        dep.put("tagType", tagType(sc.path("scope").asText("network-mac"), where));
        int cores = intOr(sc, "cpuCores", 1, where);
        dep.put("cpuCores", cores);
        dep.put("maxCpuCores", intOr(sc, "maxCpuCores", cores, where));
        dep.put("autoScale", boolOr(sc, "autoScale", false, where));
        dep.put("ingressPoint", point(ins.get(0), where + ".topology.ingressPoints[0]"));
        dep.put("egressPoint", point(outs.get(0), where + ".topology.egressPoints[0]"));
        dep.put("nics", intOr(sc, "nics", 1, where));
        return out;
    }

    private static String click(JsonNode proc, String where) {
        StringBuilder sb = new StringBuilder();
        JsonNode blocks = proc.path("blocks");
        if (!blocks.isArray() || blocks.size() == 0) {
            throw bad(where, "needs either 'click' text or 'blocks' and 'graph'");
        }
        int b = 0;
        for (JsonNode block : blocks) {
            String bw = where + ".blocks[" + b++ + "]";
            sb.append(text(block, "instance", bw)).append(" :: ").append(text(block, "block", bw))
                    .append('(').append(block.path("configArgs").asText("")).append(");\n");
        }
        int g = 0;
        for (JsonNode edge : proc.path("graph")) {
            String gw = where + ".graph[" + g++ + "]";
            sb.append(text(edge, "src", gw)).append(" [").append(edge.path("srcOutputPort").asInt(0))
                    .append("] -> [").append(edge.path("dstInputPort").asInt(0)).append("] ")
                    .append(text(edge, "dst", gw)).append(";\n");
        }
        return sb.toString();
    }

    private static JsonNode points(JsonNode topo, String key, String where) {
        JsonNode n = topo.path(key);
        if (!n.isArray() || n.size() == 0) {
            throw bad(where + ".topology." + key, "must be a non-empty array");
        }
        return n;
    }

    private static String point(JsonNode p, String where) {
        return text(p, "deviceId", where) + "/" + p.path("port").asText();
    }

    private static String tagType(String scope, String where) {
        switch (scope) {
            case "network-mac":
            case "server-rules":
            case "server-rss":
                return "mac";
            case "network-vlan":
                return "vlan";
            default:
                throw bad(where + ".scope", "'" + scope + "' is not one of network-mac, network-vlan, "
                        + "server-rules, server-rss");
        }
    }

    // Absent means the default; present with the wrong type is an error (asInt would read "two" as the default).
    private static int intOr(JsonNode n, String key, int dflt, String where) {
        JsonNode v = n.get(key);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw bad(where + "." + key, "must be an integer, got " + v);
        }
        return v.intValue();
    }

    private static boolean boolOr(JsonNode n, String key, boolean dflt, String where) {
        JsonNode v = n.get(key);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw bad(where + "." + key, "must be true or false, got " + v);
        }
        return v.booleanValue();
    }

    private static String text(JsonNode n, String key, String where) {
        JsonNode v = n.get(key);
        if (v == null || !v.isValueNode() || v.asText().isEmpty()) {
            throw bad(where + "." + key, "is required");
        }
        return v.asText();
    }

    private static MetronException bad(String where, String what) {
        return new MetronException(Fault.INVALID_CHAIN, "netcfg " + where + " " + what);
    }
}
