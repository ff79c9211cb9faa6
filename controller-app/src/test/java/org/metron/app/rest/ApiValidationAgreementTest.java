package org.metron.app.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.RequestRules;
import org.metron.app.impl.ChainRequests;
import org.metron.app.impl.Synthesis;
import org.metron.synth.SynthesisException;
import org.metron.synth.TargetProfile;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Pattern;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The API document states the validation the API applies (issue 25 item 4): values generated for every field the
 * document constrains (mutations of valid values, random strings and numbers, bounds) are put into a chain body that
 * is otherwise valid, and the document's schema for that field (type, pattern, enum, bounds, required, no other
 * keys) must accept exactly the bodies the controller's validation ({@link ChainRequests#parse}) accepts; chain ids
 * in paths likewise against {@link ChainId#of}. A rule added to either side alone fails here, naming the field and
 * the value. Not stated by a schema and so not probed: NF names unique, links/ingress/egress naming NFs of the
 * chain, maxCpuCores &ge; cpuCores (in the deployment's description), Click (compiled later), and JSON null,
 * which the API reads as an absent optional field (Swagger 2.0 has no null type).
 */
public class ApiValidationAgreementTest {
    private static final int PROBES = 1500;
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final String ALPHABET = "aAzZ09_-.:/ fF\t\n\u00e9%@[]()#$";

    private final ObjectNode doc = ApiDocument.tree();
    private final ObjectNode chain = (ObjectNode) doc.get("definitions").get("Chain");
    private final Random random = new Random(25);
    private final List<String> disagreements = new ArrayList<>();
    /** Per probed field: how many values both accepted and both refused (the probes must reach both). */
    private final Map<String, int[]> outcomes = new TreeMap<>();

    private static ObjectNode body() {
        try {
            return (ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree("{\"name\": \"web\", \"nfs\": [{\"name\": \"fw\", "
                    + "\"click\": \"FromDevice(in0) -> ToDevice(out0);\"}], \"links\": [], \"ingress\": [\"fw.in0\"], "
                    + "\"egress\": [\"fw.out0\"], \"deployment\": {\"tagType\": \"mac\", \"cpuCores\": 1, "
                    + "\"maxCpuCores\": 2, \"autoScale\": false, \"ingressPoint\": \"of:0000000000000001/1\", "
                    + "\"egressPoint\": \"of:0000000000000002/1\", \"nics\": 1, \"egressMac\": \"02:00:00:00:00:02\", "
                    + "\"replyMac\": \"02:00:00:00:00:01\"}}");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static boolean apiAccepts(JsonNode body) {
        try {
            ChainRequests.parse(body.toString());
            return true;
        } catch (MetronException e) {
            return false; // any other exception is a server error: the test fails with it
        }
    }

    private JsonNode resolve(JsonNode schema) {
        String ref = schema.path("$ref").asText("");
        return ref.startsWith("#/definitions/") ? resolve(doc.get("definitions").get(ref.substring(14))) : schema;
    }

    /**
     * A document pattern as ECMA 262 reads it (JSON Schema's dialect): there {@code $} is the end of the input only;
     * Java's also matches before a final line break.
     */
    private static Pattern ecma(String pattern) {
        return Pattern.compile(pattern.endsWith("$") && !pattern.endsWith("\\$")
                ? pattern.substring(0, pattern.length() - 1) + "\\z" : pattern);
    }

    /** Whether the document's schema accepts {@code v} (the keywords the document uses). */
    private boolean docAccepts(JsonNode schema, JsonNode v) {
        JsonNode s = resolve(schema);
        if (s.has("enum")) {
            boolean in = false;
            for (JsonNode e : s.get("enum")) {
                in |= e.equals(v);
            }
            if (!in) {
                return false;
            }
        }
        switch (s.path("type").asText("")) {
            case "string":
                if (!v.isTextual()) {
                    return false;
                }
                String t = v.asText();
                int len = t.codePointCount(0, t.length());
                return (!s.has("pattern") || ecma(s.get("pattern").asText()).matcher(t).find())
                        && len >= s.path("minLength").asInt(0) && len <= s.path("maxLength").asInt(Integer.MAX_VALUE);
            case "integer":
                if (!v.isIntegralNumber()) {
                    return false;
                }
                BigInteger i = v.bigIntegerValue();
                return (!s.has("minimum") || i.compareTo(s.get("minimum").bigIntegerValue()) >= 0)
                        && (!s.has("maximum") || i.compareTo(s.get("maximum").bigIntegerValue()) <= 0);
            case "boolean":
                return v.isBoolean();
            case "object":
                return objectAccepts(s, v);
            case "array":
                if (!v.isArray() || v.size() < s.path("minItems").asInt(0)
                        || v.size() > s.path("maxItems").asInt(Integer.MAX_VALUE)) {
                    return false;
                }
                for (JsonNode item : v) {
                    if (s.has("items") && !docAccepts(s.get("items"), item)) {
                        return false;
                    }
                }
                return true;
            default:
                return true;
        }
    }

    private boolean objectAccepts(JsonNode s, JsonNode v) {
        if (!v.isObject()) {
            return false;
        }
        for (JsonNode r : s.path("required")) {
            if (!v.has(r.asText())) {
                return false;
            }
        }
        boolean closed = s.has("additionalProperties") && !s.get("additionalProperties").asBoolean(true);
        for (var it = v.fields(); it.hasNext();) {
            var f = it.next();
            JsonNode p = s.path("properties").get(f.getKey());
            if (p == null ? closed : !docAccepts(p, f.getValue())) {
                return false;
            }
        }
        return true;
    }

    /** Puts each value at {@code field} of a valid body and compares the two verdicts. */
    private void probe(String field, List<JsonNode> values, java.util.function.Consumer<ObjectNode> prepare) {
        for (JsonNode v : values) {
            ObjectNode b = body();
            prepare.accept(b);
            JsonNode parent = b;
            String[] path = field.split("\\.");
            for (int i = 0; i < path.length - 1; i++) {
                // a number steps into an array ("nfs.0.name")
                parent = parent.isArray() ? parent.get(Integer.parseInt(path[i])) : parent.get(path[i]);
            }
            ((ObjectNode) parent).set(path[path.length - 1], v);
            count(field, docAccepts(chain, b), apiAccepts(b), v);
        }
    }

    private void count(String field, boolean doc, boolean api, Object value) {
        int[] o = outcomes.computeIfAbsent(field, f -> new int[2]);
        if (doc != api) {
            disagreements.add(field + " = " + value + ": the document " + (doc ? "accepts" : "refuses")
                    + ", the API " + (api ? "accepts" : "refuses"));
        } else {
            o[doc ? 0 : 1]++;
        }
    }

    private String mutate(String s) {
        StringBuilder b = new StringBuilder(s);
        for (int n = random.nextInt(3) + 1; n > 0; n--) {
            int at = b.length() == 0 ? 0 : random.nextInt(b.length() + 1);
            char c = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
            switch (random.nextInt(3)) {
                case 0:
                    b.insert(at, c);
                    break;
                case 1:
                    if (at < b.length()) {
                        b.setCharAt(at, c);
                    }
                    break;
                default:
                    if (at < b.length()) {
                        b.deleteCharAt(at);
                    }
            }
        }
        return b.toString();
    }

    private String randomString() {
        StringBuilder b = new StringBuilder();
        for (int n = random.nextInt(70); n > 0; n--) {
            b.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return b.toString();
    }

    /** Mutations of valid values, random strings, the valid values, and values of other JSON types. */
    private List<JsonNode> strings(String... valid) {
        List<JsonNode> out = new ArrayList<>();
        for (String v : valid) {
            out.add(JSON.textNode(v));
        }
        for (int i = 0; i < PROBES; i++) {
            out.add(JSON.textNode(i % 4 == 3 ? randomString() : mutate(valid[random.nextInt(valid.length)])));
        }
        out.add(JSON.numberNode(1));
        out.add(JSON.booleanNode(true));
        out.add(JSON.objectNode());
        out.add(JSON.arrayNode());
        return out;
    }

    private List<JsonNode> integers() {
        List<JsonNode> out = new ArrayList<>();
        for (long v : new long[] {-1, 0, 1, 2, 7, Integer.MAX_VALUE, Integer.MAX_VALUE + 1L, Long.MAX_VALUE}) {
            out.add(JSON.numberNode(v));
        }
        out.add(JSON.numberNode(new BigInteger("100000000000000000000")));
        out.add(JSON.numberNode(1.5));
        out.add(JSON.textNode("1"));
        out.add(JSON.booleanNode(true));
        for (int i = 0; i < 200; i++) {
            out.add(JSON.numberNode(random.nextInt(20) - 3));
        }
        return out;
    }

    @Test
    public void theDocumentAcceptsExactlyTheChainBodiesTheApiAccepts() {
        assertTrue("the base body is valid for both", docAccepts(chain, body()) && apiAccepts(body()));
        String long64 = "a" + "b".repeat(63);
        probe("name", strings("web", "Fw_napt-2", "z", long64, long64 + "c", "_web", "1web", "we.b"), b -> { });
        for (String point : List.of("ingressPoint", "egressPoint")) {
            probe("deployment." + point, strings("of:0000000000000001/1", "device:leaf1/12", "of:00ff/4294967295",
                    "of:1/[eth0](1)", "of:1/LOCAL", "metron:10.0.0.1:50051/2"), b -> { });
        }
        for (String mac : List.of("egressMac", "replyMac")) {
            probe("deployment." + mac, strings("02:00:00:00:00:02", "aa:BB:cc:00:11:22", "01:00:5e:00:00:01",
                    "ff:ff:ff:ff:ff:ff", "00:00:00:00:00:00", "2:0:0:0:0:2", "02-00-00-00-00-02"), b -> { });
        }
        probe("deployment.tagType", strings("mac", "vlan", "MAC", "mpls"), b -> { });
        probe("deployment.cpuCores", integers(), b -> ((ObjectNode) b.get("deployment")).remove("maxCpuCores"));
        probe("deployment.maxCpuCores", integers(), b -> ((ObjectNode) b.get("deployment")).put("cpuCores", 1));
        probe("deployment.nics", integers(), b -> { });
        probe("deployment.autoScale", List.of(JSON.booleanNode(true), JSON.booleanNode(false), JSON.textNode("true"),
                JSON.numberNode(1)), b -> { });
        // more than two ingress entries (the schema's maxItems) are refused by synthesis (ChainModel), which
        // submission and validation run next: checked apart below
        probe("ingress", List.of(array("fw.in0"), array(), array("fw.in0", "fw.in1"), array("fw"), array("fw."),
                JSON.textNode("fw.in0")), b -> { });
        for (int i = 0; i < 300; i++) {
            // the NF part names the chain's NF (a rule no schema states); the rest is probed
            String iface = "fw." + (random.nextBoolean() ? randomString() : mutate("in0"));
            probe("egress", List.of(array(iface)), b -> { });
        }
        assertAgreement();
    }

    /**
     * The NF entries: names, Click beside a black box, and every field of a black box (docs/blackbox.md), probed in
     * a body whose one NF is a valid black box. Not stated by a schema (Swagger 2.0 has no oneOf) and so not
     * probed: exactly one of click and blackbox, exactly one of program and endpoint, an endpoint in memif mode.
     */
    @Test
    public void theDocumentAcceptsExactlyTheNfsAndBlackBoxesTheApiAccepts() {
        java.util.function.Consumer<ObjectNode> blackBox = b -> {
            ObjectNode nf = (ObjectNode) b.get("nfs").get(0);
            nf.remove("click");
            nf.putObject("blackbox").put("program", "/usr/lib/metron/metron-nf-fwd").put("mode", "ring");
        };
        ObjectNode base = body();
        blackBox.accept(base);
        assertTrue("the black-box body is valid for both", docAccepts(chain, base) && apiAccepts(base));
        for (JsonNode name : strings("fw", "Fw_napt-2", "_fw", "1fw", "f.w")) {
            // ingress and egress name the NF (a rule no schema states): they follow the probed name
            String n = name.isTextual() ? name.asText() : "fw";
            probe("nfs.0.name", List.of(name), b -> {
                b.set("ingress", array(n + ".in0"));
                b.set("egress", array(n + ".out0"));
            });
        }
        String bb = "nfs.0.blackbox.";
        probe(bb + "program", strings("/usr/lib/metron/metron-nf-fwd", "/a", "/bin/nf-fw_2.x", "bin/nf", "/a b",
                "/a;b", "/a\\b"), blackBox);
        probe(bb + "mode", strings("ring", "kernel", "RING", "memif0"), blackBox);
        probe(bb + "onFailure", strings("closed", "open", "Open", "fail"), blackBox);
        probe(bb + "flowState", strings("none", "pinned", "pin", "None"), blackBox);
        probe(bb + "mayDrop", List.of(JSON.booleanNode(true), JSON.booleanNode(false), JSON.textNode("true"),
                JSON.numberNode(0)), blackBox);
        for (JsonNode arg : strings("-v", "--rate=10", "x", "", "a b", "a,b", "a'b", "(a)")) {
            probe(bb + "args", List.of(JSON.arrayNode().add(arg), JSON.arrayNode()), blackBox);
        }
        probe(bb + "args", List.of(JSON.textNode("-v"), JSON.objectNode()), blackBox);
        for (JsonNode field : strings("eth_src", "ip_dst", "tp_dst", "ip_ttl", "vlan", "ETH_SRC")) {
            probe(bb + "rewrites", List.of(JSON.arrayNode().add(field)), blackBox);
        }
        probe(bb + "rewrites", List.of(JSON.arrayNode(), JSON.textNode("eth_src")), blackBox);
        // an endpoint in place of the program, in memif mode (its default)
        java.util.function.Consumer<ObjectNode> endpoint = b -> {
            blackBox.accept(b);
            ObjectNode box = (ObjectNode) b.get("nfs").get(0).get("blackbox");
            box.remove("program");
            box.remove("mode");
            box.putObject("endpoint").put("memif", "/run/metron/fw.sock");
        };
        probe(bb + "endpoint.memif", strings("/run/metron/fw.sock", "/s", "run/fw.sock", "/a b", "/a(b)"), endpoint);
        probe(bb + "endpoint", List.of(JSON.objectNode().put("memif", "/s"), JSON.objectNode(), JSON.textNode("/s"),
                JSON.objectNode().put("memif", "/s").put("other", 1)), endpoint);
        assertAgreement();
    }

    @Test
    public void moreIngressEntriesThanTheDocumentAllowsAreRefusedBySynthesis() {
        ObjectNode b = body();
        b.set("ingress", array("fw.in0", "fw.a", "fw.b"));
        assertFalse(docAccepts(chain, b));
        SynthesisException e = assertThrows(SynthesisException.class, () -> Synthesis.SYNTHESIZER.compile(
                ChainRequests.parse(b.toString()).spec(), TargetProfile.NONE));
        assertTrue(e.getMessage(), e.getMessage().contains("ingress"));
    }

    private static ArrayNode array(String... items) {
        ArrayNode a = JSON.arrayNode();
        for (String i : items) {
            a.add(i);
        }
        return a;
    }

    @Test
    public void requiredAndUnknownKeysAgree() {
        for (ObjectNode where : List.of(chain, (ObjectNode) resolve(chain.get("properties").get("deployment")))) {
            boolean top = where == chain;
            where.get("properties").fieldNames().forEachRemaining(key -> {
                ObjectNode b = body();
                (top ? b : (ObjectNode) b.get("deployment")).remove(key);
                if (key.equals("cpuCores")) {
                    ((ObjectNode) b.get("deployment")).put("maxCpuCores", 1); // the default, 1, must not exceed it
                }
                count("without " + key, docAccepts(chain, b), apiAccepts(b), "(absent)");
            });
            ObjectNode b = body();
            (top ? b : (ObjectNode) b.get("deployment")).put("extra", 1);
            count("extra key", docAccepts(chain, b), apiAccepts(b), top ? "top" : "deployment");
        }
        ObjectNode b = body();
        ((ObjectNode) b.get("nfs").get(0)).put("extra", 1);
        count("extra key", docAccepts(chain, b), apiAccepts(b), "nfs[0]");
        assertEquals(List.of(), disagreements);
        assertTrue("some keys are required", outcomes.values().stream().anyMatch(o -> o[1] > 0));
        assertTrue("some keys are optional", outcomes.values().stream().anyMatch(o -> o[0] > 0));
    }

    @Test
    public void chainAndServerIdsInPathsAgree() {
        List<JsonNode> params = new ArrayList<>();
        doc.get("paths").forEach(p -> p.forEach(op -> op.path("parameters").forEach(param -> {
            if (param.path("in").asText().equals("path")) {
                params.add(param);
            }
        })));
        assertTrue(params.size() >= 7);
        List<JsonNode> values = strings("web", "1web", "a.b-c_d", "b".repeat(64), "b".repeat(65), "_web", "-x",
                "metron:srv1", "metron:", "Metron:srv1", "of:0000000000000001");
        for (JsonNode param : params) {
            boolean server = param.get("name").asText().equals("server"); // a server's device id, not a chain's
            for (JsonNode v : values) {
                if (!v.isTextual()) {
                    continue; // a path segment is text
                }
                boolean api;
                try {
                    if (server && !RequestRules.deviceId(v.asText())) {
                        throw new MetronException(MetronException.Fault.INVALID_REQUEST, "not a device id");
                    }
                    if (!server) {
                        ChainId.of(v.asText());
                    }
                    api = true;
                } catch (MetronException e) {
                    api = false;
                }
                count("path " + param.get("name").asText(), docAccepts(param, v), api, v);
            }
        }
        assertAgreement();
    }

    @Test
    public void theScalingOperationsQueryParametersAgree() {
        doc.get("paths").forEach(p -> p.forEach(op -> op.path("parameters").forEach(param -> {
            if (param.path("in").asText().equals("query") && param.path("required").asBoolean()) {
                for (String v : new String[] {null, "", "g0", "g0.1"}) {
                    boolean api;
                    try {
                        RequestRules.required(param.get("name").asText(), v, "test");
                        api = true;
                    } catch (MetronException e) {
                        api = false;
                    }
                    count("query " + param.get("name").asText(), v != null && docAccepts(param, JSON.textNode(v)),
                            api, v);
                }
            }
        })));
        assertEquals(List.of(), disagreements);
        assertEquals(java.util.Set.of("query group", "query keep", "query retire"), outcomes.keySet());
    }

    private void assertAgreement() {
        assertEquals("the document and the API disagree (" + disagreements.size() + ")",
                List.of(), disagreements.subList(0, Math.min(20, disagreements.size())));
        outcomes.forEach((field, o) -> assertTrue(field + ": the probes reached both verdicts (" + o[0]
                + " accepted, " + o[1] + " refused)", o[0] > 0 && o[1] > 0));
    }
}
