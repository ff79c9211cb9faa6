package org.metron.synth;

import com.fasterxml.jackson.databind.JsonNode;
import org.metron.synth.json.JsonText;

import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;

/**
 * Readers of chain JSON fields with the errors the API gives (each names where and what): the one set used by
 * {@link ChainSpec} and {@link BlackBoxSpec}.
 */
final class ChainJsonFields {
    private ChainJsonFields() {
    }

    /** Whether a key holds a value (JSON null counts as absent). */
    static boolean present(JsonNode m, String key) {
        return m.hasNonNull(key);
    }

    static JsonNode obj(JsonNode o, String where, Set<String> allowed) {
        if (o == null || !o.isObject()) {
            throw new SynthesisException("chain JSON: " + where + " must be an object");
        }
        for (Iterator<String> it = o.fieldNames(); it.hasNext();) {
            String k = it.next();
            if (!allowed.contains(k)) {
                throw new SynthesisException("chain JSON: unknown key '" + k + "' in " + where + ", allowed: "
                        + new TreeSet<>(allowed));
            }
        }
        return o;
    }

    static String str(JsonNode m, String key, String where, boolean required) {
        if (!present(m, key)) {
            if (required) {
                throw new SynthesisException("chain JSON: " + where + " needs a string '" + key + "'");
            }
            return null;
        }
        JsonNode v = m.get(key);
        if (!v.isTextual()) {
            throw new SynthesisException("chain JSON: " + where + "." + key + " must be a string");
        }
        return v.asText();
    }

    static JsonNode list(JsonNode m, String key, String where, boolean required) {
        if (!present(m, key)) {
            if (required) {
                throw new SynthesisException("chain JSON: " + where + " needs an array '" + key + "'");
            }
            return JsonText.MAPPER.createArrayNode();
        }
        JsonNode v = m.get(key);
        if (!v.isArray()) {
            throw new SynthesisException("chain JSON: " + where + "." + key + " must be an array");
        }
        return v;
    }

    static int integer(JsonNode m, String key, String where, int dflt) {
        if (!present(m, key)) {
            return dflt;
        }
        JsonNode v = m.get(key);
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 0) {
            throw new SynthesisException("chain JSON: " + where + "." + key + " must be a non-negative integer");
        }
        return v.intValue();
    }

    static boolean bool(JsonNode m, String key, String where, boolean dflt) {
        if (!present(m, key)) {
            return dflt;
        }
        JsonNode v = m.get(key);
        if (!v.isBoolean()) {
            throw new SynthesisException("chain JSON: " + where + "." + key + " must be true or false");
        }
        return v.booleanValue();
    }
}
