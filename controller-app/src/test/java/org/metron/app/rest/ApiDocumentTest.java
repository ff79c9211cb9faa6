package org.metron.app.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.Test;
import org.metron.app.api.MetronException;

import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/**
 * The API document cannot drift from the resources: every JAX-RS resource method of the application is in it
 * under its path and verb with exactly the statuses it declares ({@link Statuses}, plus authentication's 401
 * and 403), nothing else is, every reference resolves, the chain schema is the synthesizer's, and the error
 * body names every fault there is.
 */
public class ApiDocumentTest {
    private static final List<Class<? extends Annotation>> VERBS = List.of(GET.class, POST.class, PUT.class,
            DELETE.class);

    private final ObjectNode doc = ApiDocument.tree();

    /** "verb path" → declared statuses, for every resource method of the application. */
    private static Map<String, Set<String>> resourceMethods() {
        Map<String, Set<String>> out = new java.util.TreeMap<>();
        for (Class<?> c : new MetronWebApplication().getClasses()) {
            Path base = c.getAnnotation(Path.class);
            if (base == null) {
                continue; // providers (the exception mapper)
            }
            for (Method m : c.getMethods()) {
                for (Class<? extends Annotation> verb : VERBS) {
                    if (m.isAnnotationPresent(verb)) {
                        Path sub = m.getAnnotation(Path.class);
                        String path = ("/" + base.value() + "/" + (sub == null ? "" : sub.value()))
                                .replaceAll("/+", "/").replaceAll("(.)/$", "$1");
                        Statuses st = m.getAnnotation(Statuses.class);
                        assertNotNull(c.getSimpleName() + "." + m.getName() + " declares no @Statuses", st);
                        Set<String> codes = Arrays.stream(st.value()).mapToObj(Integer::toString)
                                .collect(Collectors.toCollection(TreeSet::new));
                        out.put(verb.getSimpleName().toLowerCase() + " " + path, codes);
                    }
                }
            }
        }
        return out;
    }

    @Test
    public void everyResourceMethodIsDocumentedWithTheStatusesItAnswers() {
        Map<String, Set<String>> methods = resourceMethods();
        assertTrue(methods.toString(), methods.size() >= 17);
        Set<String> documented = new TreeSet<>();
        doc.get("paths").fields().forEachRemaining(p -> p.getValue().fieldNames()
                .forEachRemaining(verb -> documented.add(verb + " " + p.getKey())));
        assertEquals("documented operations = resource methods", methods.keySet(), documented);
        methods.forEach((op, codes) -> {
            String[] vp = op.split(" ");
            JsonNode responses = doc.get("paths").get(vp[1]).get(vp[0]).get("responses");
            Set<String> want = new TreeSet<>(codes);
            want.addAll(List.of("401", "403"));
            Set<String> got = new TreeSet<>();
            responses.fieldNames().forEachRemaining(got::add);
            assertEquals(op, want, got);
            for (String code : codes) {
                JsonNode r = responses.get(code);
                assertFalse(op + " " + code + " has a description", r.path("description").asText().isEmpty());
                if (code.startsWith("4") || code.startsWith("5")) {
                    assertEquals(op + " " + code, "#/definitions/Error", r.path("schema").path("$ref").asText());
                    assertEquals(op + " " + code + " example", Integer.parseInt(code),
                            r.path("examples").path("application/json").path("status").asInt());
                } else if (!code.equals("204")) {
                    assertTrue(op + " " + code + " has a schema", r.has("schema"));
                }
            }
        });
    }

    @Test
    public void everyReferenceResolvesAndTheChainIsTheSynthesizersSchema() throws Exception {
        List<String> refs = new ArrayList<>();
        collect(doc, refs);
        for (String r : refs) {
            assertTrue(r, r.startsWith("#/definitions/"));
            assertTrue(r + " is defined", doc.get("definitions").has(r.substring("#/definitions/".length())));
        }
        JsonNode chain = doc.get("definitions").get("Chain");
        JsonNode source = new com.fasterxml.jackson.databind.ObjectMapper().readTree(org.metron.synth.ChainSpec.class
                .getResourceAsStream(ApiDocument.CHAIN_SCHEMA));
        assertEquals(source.get("properties").fieldNames().next(), chain.get("properties").fieldNames().next());
        Set<String> props = new HashSet<>();
        chain.get("properties").fieldNames().forEachRemaining(props::add);
        Set<String> want = new HashSet<>();
        source.get("properties").fieldNames().forEachRemaining(want::add);
        assertEquals(want, props);
        // the synthesizer's required fields, and the deployment the controller requires (RequestRules)
        List<String> required = new ArrayList<>();
        source.get("required").forEach(r -> required.add(r.asText()));
        required.add("deployment");
        List<String> documented = new ArrayList<>();
        chain.get("required").forEach(r -> documented.add(r.asText()));
        assertEquals(required, documented);
        assertFalse(chain.has("$defs") || chain.has("$schema") || chain.has("$id"));
        assertEquals(source.get("$defs").get("iface"), doc.get("definitions").get("ChainIface"));
        assertEquals("#/definitions/ChainIface", chain.get("properties").get("ingress").get("items").get("$ref")
                .asText());
    }

    @Test
    public void theErrorBodyNamesEveryFaultWithItsStatus() {
        Set<String> faults = Arrays.stream(MetronException.Fault.values()).map(Enum::name)
                .collect(Collectors.toSet());
        Set<String> documented = new HashSet<>();
        doc.get("definitions").get("Error").get("properties").get("error").get("enum")
                .forEach(f -> documented.add(f.asText()));
        assertEquals(faults, documented);
        // each documented error example names a fault whose status is the one it is documented under
        doc.get("paths").forEach(p -> p.forEach(op -> op.get("responses").fields().forEachRemaining(r -> {
            JsonNode ex = r.getValue().path("examples").path("application/json");
            if (ex.has("error")) {
                assertEquals(r.getKey(), MetronExceptionMapper.status(MetronException.Fault.valueOf(
                        ex.get("error").asText())), Integer.parseInt(r.getKey()));
            }
        })));
    }

    private static void collect(JsonNode n, List<String> refs) {
        if (n.isObject()) {
            if (n.has("$ref")) {
                refs.add(n.get("$ref").asText());
            }
            n.forEach(x -> collect(x, refs));
        } else if (n.isArray()) {
            n.forEach(x -> collect(x, refs));
        }
    }
}
