package org.metron.synth.json;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.PrettyPrinter;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.metron.synth.SynthesisException;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;

/**
 * JSON in and out of the synthesizer, with Jackson (which ONOS ships as a bundle). Reading is strict: one
 * document, no duplicate keys, nesting bounded; errors carry the line:col of the offending character. Writing
 * lays documents out as the repository's files are: two-space indent, {@code "key": value}, arrays of at most
 * {@link #FLAT_ARRAY} scalars on one line.
 */
public final class JsonText {
    /** The one mapper: thread-safe once configured. */
    public static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    /** Deeper than any chain could be; Jackson's recursive tree reader overflows the stack on ~10^4 levels. */
    public static final int MAX_DEPTH = 64;
    /** Arrays of scalars up to this size are written on one line. */
    static final int FLAT_ARRAY = 16;

    private JsonText() {
    }

    /**
     * Reads one JSON document.
     *
     * @throws SynthesisException naming line:col and what is wrong there, for malformed input
     */
    public static JsonNode read(String text) {
        if (text == null || text.isBlank()) {
            throw new SynthesisException("chain JSON: the document is empty, expected a JSON object");
        }
        requireShallow(text);
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new SynthesisException(null, null, at == null ? 0 : at.getLineNr(), at == null ? 0
                    : at.getColumnNr(), "chain JSON: " + e.getOriginalMessage());
        }
    }

    /** Rejects nesting deeper than {@link #MAX_DEPTH}, naming where it gets too deep, before Jackson reads it. */
    private static void requireShallow(String text) {
        int depth = 0;
        int line = 1;
        int col = 0;
        boolean inString = false;
        boolean escaped = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            col++;
            if (c == '\n') {
                line++;
                col = 0;
            } else if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                if (++depth > MAX_DEPTH) {
                    throw new SynthesisException(null, null, line, col, "chain JSON: nested deeper than "
                            + MAX_DEPTH + " levels");
                }
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
    }

    /** Writes a document, ending with a newline. */
    public static String write(JsonNode tree) {
        StringWriter out = new StringWriter();
        Layout layout = new Layout();
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out)) {
            g.setPrettyPrinter(layout);
            write(g, layout, tree);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.append('\n').toString();
    }

    private static void write(JsonGenerator g, Layout layout, JsonNode n) throws IOException {
        if (n.isObject()) {
            g.writeStartObject();
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                g.writeFieldName(e.getKey());
                write(g, layout, e.getValue());
            }
            g.writeEndObject();
        } else if (n.isArray()) {
            boolean flat = n.size() <= FLAT_ARRAY;
            for (JsonNode x : n) {
                flat &= x.isValueNode();
            }
            layout.next(flat);
            g.writeStartArray();
            for (JsonNode x : n) {
                write(g, layout, x);
            }
            g.writeEndArray();
        } else {
            MAPPER.writeTree(g, n);
        }
    }

    /** Whitespace only (Jackson writes every token): objects one entry per line, short scalar arrays inline. */
    private static final class Layout implements PrettyPrinter {
        private final Deque<Boolean> flat = new ArrayDeque<>();
        private boolean nextFlat;
        private int depth;

        void next(boolean flatArray) {
            nextFlat = flatArray;
        }

        private void newline(JsonGenerator g) throws IOException {
            g.writeRaw('\n');
            for (int i = 0; i < depth; i++) {
                g.writeRaw("  ");
            }
        }

        @Override
        public void writeRootValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw('\n');
        }

        @Override
        public void writeStartObject(JsonGenerator g) throws IOException {
            g.writeRaw('{');
            depth++;
        }

        @Override
        public void beforeObjectEntries(JsonGenerator g) throws IOException {
            newline(g);
        }

        @Override
        public void writeObjectFieldValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(": ");
        }

        @Override
        public void writeObjectEntrySeparator(JsonGenerator g) throws IOException {
            g.writeRaw(',');
            newline(g);
        }

        @Override
        public void writeEndObject(JsonGenerator g, int entries) throws IOException {
            depth--;
            if (entries > 0) {
                newline(g);
            }
            g.writeRaw('}');
        }

        @Override
        public void writeStartArray(JsonGenerator g) throws IOException {
            flat.push(nextFlat);
            if (!nextFlat) {
                depth++;
            }
            g.writeRaw('[');
        }

        @Override
        public void beforeArrayValues(JsonGenerator g) throws IOException {
            if (!flat.peek()) {
                newline(g);
            }
        }

        @Override
        public void writeArrayValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(',');
            if (flat.peek()) {
                g.writeRaw(' ');
            } else {
                newline(g);
            }
        }

        @Override
        public void writeEndArray(JsonGenerator g, int values) throws IOException {
            if (!flat.pop()) {
                depth--;
                if (values > 0) {
                    newline(g);
                }
            }
            g.writeRaw(']');
        }
    }
}
