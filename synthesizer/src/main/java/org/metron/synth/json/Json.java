package org.metron.synth.json;

import org.metron.synth.SynthesisException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader (RFC 8259) so the synthesizer jar needs no third-party library inside ONOS.
 * Objects become insertion-ordered {@code Map<String, Object>}, arrays {@code List<Object>}, numbers
 * {@code Long} or {@code Double}. Errors carry line:col of the offending character.
 */
public final class Json {
    private final String text;
    private int pos;
    private int line = 1;
    private int lineStart;

    private Json(String text) {
        this.text = text;
    }

    /**
     * Parses one JSON document.
     *
     * @throws SynthesisException with line:col on malformed input
     */
    public static Object parse(String text) {
        Json p = new Json(text);
        p.skipWs();
        Object v = p.value();
        p.skipWs();
        if (p.pos < text.length()) {
            throw p.error("unexpected '" + text.charAt(p.pos) + "' after the JSON document");
        }
        return v;
    }

    private SynthesisException error(String msg) {
        return new SynthesisException(null, null, line, pos - lineStart + 1, "chain JSON: " + msg);
    }

    private void skipWs() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '\n') {
                line++;
                lineStart = pos + 1;
            } else if (c != ' ' && c != '\t' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private Object value() {
        if (pos >= text.length()) {
            throw error("unexpected end of input, expected a value");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected '" + c + "', expected a value");
        }
    }

    private Object literal(String word, Object v) {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected token, expected '" + word + "'");
        }
        pos += word.length();
        return v;
    }

    private Map<String, Object> object() {
        Map<String, Object> m = new LinkedHashMap<>();
        pos++;
        skipWs();
        if (peek() == '}') {
            pos++;
            return Collections.unmodifiableMap(m);
        }
        while (true) {
            skipWs();
            if (peek() != '"') {
                throw error("expected a \"key\"");
            }
            int keyLine = line;
            int keyCol = pos - lineStart + 1;
            String k = string();
            if (m.containsKey(k)) {
                throw new SynthesisException(null, null, keyLine, keyCol, "chain JSON: duplicate key \"" + k + "\"");
            }
            skipWs();
            expect(':');
            skipWs();
            m.put(k, value());
            skipWs();
            char c = peek();
            pos++;
            if (c == '}') {
                return Collections.unmodifiableMap(m);
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or '}' in object");
            }
        }
    }

    private List<Object> array() {
        List<Object> l = new ArrayList<>();
        pos++;
        skipWs();
        if (peek() == ']') {
            pos++;
            return Collections.unmodifiableList(l);
        }
        while (true) {
            skipWs();
            l.add(value());
            skipWs();
            char c = peek();
            pos++;
            if (c == ']') {
                return Collections.unmodifiableList(l);
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or ']' in array");
            }
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private String string() {
        pos++;
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                pos--;
                throw error("control character in string (use \\n)");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            char e = peek();
            pos++;
            switch (e) {
                case '"': sb.append('"'); break;
                case '\\': sb.append('\\'); break;
                case '/': sb.append('/'); break;
                case 'b': sb.append('\b'); break;
                case 'f': sb.append('\f'); break;
                case 'n': sb.append('\n'); break;
                case 'r': sb.append('\r'); break;
                case 't': sb.append('\t'); break;
                case 'u':
                    if (pos + 4 > text.length()) {
                        throw error("bad \\u escape");
                    }
                    try {
                        sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    pos += 4;
                    break;
                default:
                    pos--;
                    throw error("bad escape '\\" + e + "'");
            }
        }
    }

    private Object number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        while (pos < text.length() && "0123456789.eE+-".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        String s = text.substring(start, pos);
        try {
            if (s.matches("-?(0|[1-9]\\d*)")) {
                return Long.parseLong(s);
            }
            if (s.matches("-?(0|[1-9]\\d*)(\\.\\d+)?([eE][+-]?\\d+)?")) {
                return Double.parseDouble(s);
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        pos = start;
        throw error("bad number '" + s + "'");
    }
}
