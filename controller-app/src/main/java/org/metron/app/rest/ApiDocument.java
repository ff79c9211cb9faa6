package org.metron.app.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.RequestRules;
import org.metron.synth.ChainSpec;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The REST API's contract, a Swagger 2.0 document (what ONOS 2.7's API viewer reads): written by hand in
 * {@value #DOCUMENT}, with the chain's schema taken from the synthesizer's {@value #CHAIN_SCHEMA} (its one
 * source) where the document refers to it, turned into a Swagger 2.0 schema ({@code $defs} become definitions
 * named {@code Chain<Name>}, JSON Schema 2020-12's {@code $schema} and {@code $id} go). Served at
 * /onos/metron/swagger.json by both hosts and to ONOS's API documentation ({@link ApiDocRegistrator}). The rules
 * the controller checks beyond that schema (a deployment with both points, point and MAC patterns, chain ids in
 * paths) are written in from {@link RequestRules}, the constants its validation applies.
 */
public final class ApiDocument {
    static final String DOCUMENT = "/apidoc/metron-api.json";
    static final String CHAIN_SCHEMA = "/chain.schema.json";
    /** How the document refers to the chain schema file. */
    private static final String CHAIN_REF = "chain.schema.json";
    private static final String DEFS = "#/$defs/";

    private static volatile String text;

    private ApiDocument() {
    }

    /** The document as served. */
    public static String json() {
        String t = text;
        if (t == null) {
            t = tree().toString();
            text = t;
        }
        return t;
    }

    /** The document as a tree (a fresh copy). */
    public static ObjectNode tree() {
        ObjectNode doc = (ObjectNode) read(ApiDocument.class, DOCUMENT);
        JsonNode chain = read(ChainSpec.class, CHAIN_SCHEMA);
        ObjectNode definitions = (ObjectNode) doc.get("definitions");
        List<String> names = new ArrayList<>();
        definitions.fields().forEachRemaining(d -> {
            if (CHAIN_REF.equals(d.getValue().path("$ref").asText())) {
                names.add(d.getKey());
            }
        });
        names.forEach(n -> definitions.set(n, controllerRules(swagger2(chain.deepCopy(), n, definitions))));
        parameterRules(doc);
        return doc;
    }

    /**
     * What the controller asks of a chain body beyond the synthesizer's schema, from the constants its validation
     * applies ({@link RequestRules}): a deployment naming both points, points and MACs in ONOS's form, counts
     * that are ints, a name that is a chain id.
     */
    private static ObjectNode controllerRules(ObjectNode chain) {
        ObjectNode props = (ObjectNode) chain.get("properties");
        ((ObjectNode) props.get("name")).put("pattern", RequestRules.CHAIN_NAME).put("maxLength", 64);
        required(chain, "deployment");
        ObjectNode d = (ObjectNode) props.get("deployment");
        required(d, "ingressPoint");
        required(d, "egressPoint");
        d.put("description", "How the controller places the chain: required by the controller (the synthesizer "
                + "ignores it). maxCpuCores must be at least cpuCores.");
        ObjectNode dp = (ObjectNode) d.get("properties");
        for (String point : List.of("ingressPoint", "egressPoint")) {
            ((ObjectNode) dp.get(point)).put("pattern", RequestRules.CONNECT_POINT);
        }
        for (String mac : List.of("egressMac", "replyMac")) {
            ((ObjectNode) dp.get(mac)).put("pattern", RequestRules.UNICAST_MAC);
        }
        for (String count : List.of("cpuCores", "maxCpuCores", "nics")) {
            ((ObjectNode) dp.get(count)).put("maximum", RequestRules.MAX_COUNT);
        }
        return chain;
    }

    private static void required(ObjectNode schema, String field) {
        ArrayNode r = schema.has("required") ? (ArrayNode) schema.get("required") : schema.putArray("required");
        for (JsonNode f : r) {
            if (f.asText().equals(field)) {
                return;
            }
        }
        r.add(field);
    }

    /** Chain and server ids in paths and the scaling operations' group parameters, as the resources check them. */
    private static void parameterRules(ObjectNode doc) {
        doc.get("paths").forEach(path -> path.forEach(op -> op.path("parameters").forEach(p -> {
            ObjectNode param = (ObjectNode) p;
            String in = param.path("in").asText();
            String name = param.path("name").asText();
            if (in.equals("path") && (name.equals("name") || name.equals("chain"))) {
                param.put("pattern", RequestRules.CHAIN_ID);
            } else if (in.equals("path") && name.equals("server")) {
                param.put("pattern", RequestRules.DEVICE_ID);
            } else if (in.equals("query") && param.path("required").asBoolean()) {
                param.put("minLength", 1);
            }
        })));
    }

    /** A JSON Schema 2020-12 document as a Swagger 2.0 schema named {@code name}; its $defs join definitions. */
    private static ObjectNode swagger2(ObjectNode schema, String name, ObjectNode definitions) {
        schema.remove("$schema");
        schema.remove("$id");
        JsonNode defs = schema.remove("$defs");
        if (defs != null) {
            defs.fields().forEachRemaining(e -> definitions.set(defName(name, e.getKey()),
                    refs(e.getValue(), name)));
        }
        return (ObjectNode) refs(schema, name);
    }

    private static String defName(String schema, String def) {
        return schema + Character.toUpperCase(def.charAt(0)) + def.substring(1);
    }

    /** Points $refs into $defs at the definitions they became. */
    private static JsonNode refs(JsonNode n, String schema) {
        if (n.isObject()) {
            ObjectNode o = (ObjectNode) n;
            String ref = o.path("$ref").asText("");
            if (ref.startsWith(DEFS)) {
                o.put("$ref", "#/definitions/" + defName(schema, ref.substring(DEFS.length())));
            }
            o.forEach(x -> refs(x, schema));
        } else if (n.isArray()) {
            n.forEach(x -> refs(x, schema));
        }
        return n;
    }

    private static JsonNode read(Class<?> owner, String resource) {
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the classpath of " + owner.getName());
            }
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
