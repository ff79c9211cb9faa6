package org.metron.synth.click;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An element's configuration string {@code ( ... )} split into arguments, as Click's cp_argvec splits it: at
 * top-level commas (not inside brackets, braces, parentheses or quotes), comments dropped, {@code $variables}
 * replaced by their values. Each argument keeps the position of its first character.
 */
final class ConfigArgs {
    private ConfigArgs() {
    }

    /**
     * Reads the parenthesized list at the lexer's position (after whitespace) and leaves it after the ')'.
     *
     * @param lx   lexer at the '('
     * @param vars values of {@code $variables}; null to keep them as written (a body read before its formals
     *             are known)
     * @return the arguments; none for {@code ()}
     */
    static List<Arg> read(ClickLexer lx, Map<String, String> vars) {
        lx.skip();
        int open = lx.pos();
        int end = lx.end();
        int pos = open + 1;
        List<Arg> result = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int curStart = -1;
        int depth = 0;
        while (true) {
            if (pos >= end) {
                throw lx.error(open, "missing ')' for '(' opened here");
            }
            char c = lx.charAt(pos);
            if (lx.commentAt(pos)) {
                lx.seek(pos);
                lx.skip();
                if (curStart >= 0) {
                    cur.append(' ');
                }
                pos = lx.pos() == pos ? pos + 1 : lx.pos();
                continue;
            }
            if (c == '"' || c == '\'') {
                int q = pos++;
                while (pos < end && lx.charAt(pos) != c) {
                    if (lx.charAt(pos) == '\\') {
                        pos++;
                    }
                    pos++;
                }
                if (pos >= end) {
                    throw lx.error(q, "unterminated string");
                }
                pos++;
                if (curStart < 0) {
                    curStart = q;
                }
                cur.append(lx.text(q, pos));
                continue;
            }
            if (vars != null && c == '$' && pos + 1 < end && ClickLexer.wordStart(lx.charAt(pos + 1))) {
                int v = pos++;
                while (pos < end && (Character.isLetterOrDigit(lx.charAt(pos)) || lx.charAt(pos) == '_')) {
                    pos++;
                }
                String name = lx.text(v + 1, pos);
                String val = vars.get(name);
                if (val == null) {
                    throw lx.error(v, "undefined variable '$" + name + "'");
                }
                if (curStart < 0) {
                    curStart = v;
                }
                cur.append(val);
                continue;
            }
            if (depth == 0 && (c == ',' || c == ')')) {
                String t = cur.toString().trim();
                if (!t.isEmpty() || c == ',' || !result.isEmpty()) {
                    if (t.isEmpty()) {
                        throw lx.error(pos, "empty argument");
                    }
                    result.add(new Arg(t, lx.line(curStart), lx.column(curStart)));
                }
                cur.setLength(0);
                curStart = -1;
                pos++;
                if (c == ')') {
                    lx.seek(pos);
                    return result;
                }
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            }
            if (curStart < 0 && !Character.isWhitespace(c)) {
                curStart = pos;
            }
            cur.append(c);
            pos++;
        }
    }
}
