package org.metron.synth.click;

import org.metron.synth.SynthesisException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Recursive-descent parser for the Click language subset Metron accepts (grammar in
 * tests/click-vectors/README.md): declarations, anonymous elements, connection chains with ports, comments,
 * {@code define}, {@code require} (ignored) and {@code elementclass} compounds with formal parameters.
 * <p>
 * Compound instances are expanded by re-parsing the class body (kept as a source range, so every position
 * stays exact) under a name prefix; the body's {@code input}/{@code output} become tunnel elements that are
 * bypassed once the whole file is read. Errors are {@link SynthesisException}s with line:col.
 */
public final class ClickParser {
    private static final String TUNNEL = "<tunnel>";

    /** State shared by the top-level parse and every compound expansion. */
    private static final class Output {
        final List<ElementDecl> elements = new ArrayList<>();
        final List<Connection> connections = new ArrayList<>();
        int depth;
    }

    /** An elementclass: body source range, formals, and the scope it was defined in. */
    private static final class Compound {
        final String name;
        final int bodyStart;
        final int bodyEnd;
        final List<String> formals;
        final Map<String, Compound> scope;

        Compound(String name, int bodyStart, int bodyEnd, List<String> formals, Map<String, Compound> scope) {
            this.name = name;
            this.bodyStart = bodyStart;
            this.bodyEnd = bodyEnd;
            this.formals = formals;
            this.scope = scope;
        }
    }

    /** What a name in a connection stands for: a plain element or a compound instance (two tunnels). */
    private static final class Node {
        final ElementDecl in;
        final ElementDecl out;

        Node(ElementDecl in, ElementDecl out) {
            this.in = in;
            this.out = out;
        }
    }

    private final String src;
    private final int end;
    private final int[] lineStarts;
    private final Output out;
    private final String prefix;
    private final Map<String, String> vars;
    private final Map<String, Compound> compounds;
    private final Map<String, Node> names = new HashMap<>();
    private final Node inputTunnel;
    private final Node outputTunnel;
    private int pos;
    private int created;

    private ClickParser(String src, int start, int end, int[] lineStarts, Output out, String prefix,
                        Map<String, String> vars, Map<String, Compound> compounds, Node inputTunnel,
                        Node outputTunnel) {
        this.src = src;
        this.pos = start;
        this.end = end;
        this.lineStarts = lineStarts;
        this.out = out;
        this.prefix = prefix;
        this.vars = vars;
        this.compounds = compounds;
        this.inputTunnel = inputTunnel;
        this.outputTunnel = outputTunnel;
    }

    /**
     * Parses a whole configuration.
     *
     * @param text Click text
     * @return the flattened configuration
     * @throws SynthesisException with line:col (no NF name: callers add it with {@link SynthesisException#inNf})
     */
    public static ClickConfig parse(String text) {
        List<Integer> starts = new ArrayList<>();
        starts.add(0);
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                starts.add(i + 1);
            }
        }
        int[] ls = starts.stream().mapToInt(Integer::intValue).toArray();
        Output out = new Output();
        new ClickParser(text, 0, text.length(), ls, out, "", new HashMap<>(), new HashMap<>(), null, null)
                .statements();
        eliminateTunnels(out);
        return new ClickConfig(out.elements, out.connections);
    }

    // ---- positions and errors ---------------------------------------------------------------------------

    private int lineOf(int p) {
        int lo = 0;
        int hi = lineStarts.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (lineStarts[mid] <= p) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo + 1;
    }

    private int colOf(int p) {
        return p - lineStarts[lineOf(p) - 1] + 1;
    }

    private SynthesisException error(int p, String msg) {
        return new SynthesisException(null, null, lineOf(p), colOf(p), msg);
    }

    private String found() {
        skip();
        if (pos >= end) {
            return "end of input";
        }
        return "'" + src.charAt(pos) + "'";
    }

    // ---- lexical helpers ----------------------------------------------------------------------------------

    /** Skips whitespace and comments. */
    private void skip() {
        while (pos < end) {
            char c = src.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (c == '/' && pos + 1 < end && src.charAt(pos + 1) == '/') {
                while (pos < end && src.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == '/' && pos + 1 < end && src.charAt(pos + 1) == '*') {
                int close = src.indexOf("*/", pos + 2);
                if (close < 0 || close + 2 > end) {
                    throw error(pos, "unterminated /* comment");
                }
                pos = close + 2;
            } else {
                return;
            }
        }
    }

    private boolean peek(String s) {
        skip();
        return src.startsWith(s, pos) && pos + s.length() <= end;
    }

    private boolean accept(String s) {
        if (peek(s)) {
            pos += s.length();
            return true;
        }
        return false;
    }

    private static boolean wordStart(char c) {
        return Character.isLetter(c) || c == '_' || c == '@';
    }

    private boolean wordChar(int p) {
        char c = src.charAt(p);
        if (c == '/') {
            // '/' joins compound path names (a/b) but never starts a comment
            return p + 1 < end && (wordStart(src.charAt(p + 1)) || Character.isDigit(src.charAt(p + 1)));
        }
        return Character.isLetterOrDigit(c) || c == '_' || c == '@';
    }

    /** Reads an identifier or returns null (position unchanged) if none starts here. */
    private String word() {
        skip();
        if (pos >= end || !wordStart(src.charAt(pos))) {
            return null;
        }
        int s = pos;
        while (pos < end && wordChar(pos)) {
            pos++;
        }
        return src.substring(s, pos);
    }

    private int portNumber() {
        skip();
        int s = pos;
        while (pos < end && Character.isDigit(src.charAt(pos))) {
            pos++;
        }
        if (s == pos) {
            throw error(pos, "expected a port number, found " + found());
        }
        if (pos - s > 5) {
            throw error(s, "port number too large");
        }
        int n = Integer.parseInt(src.substring(s, pos));
        if (!accept("]")) {
            throw error(pos, "expected ']' after port number, found " + found());
        }
        return n;
    }

    // ---- grammar ------------------------------------------------------------------------------------------

    private void statements() {
        while (true) {
            skip();
            if (pos >= end) {
                return;
            }
            if (accept(";")) {
                continue;
            }
            int s = pos;
            String w = word();
            if ("elementclass".equals(w)) {
                elementclass();
                continue;
            }
            if (("define".equals(w) || "require".equals(w)) && peek("(")) {
                int argPos = pos;
                List<Arg> args = args(false);
                if (w.equals("define")) {
                    define(args, argPos);
                }
                endOfStatement();
                continue;
            }
            pos = s;
            connectionChain();
            endOfStatement();
        }
    }

    private void endOfStatement() {
        skip();
        if (pos >= end || accept(";")) {
            return;
        }
        throw error(pos, "expected ';' or '->', found " + found());
    }

    private void define(List<Arg> args, int at) {
        for (Arg a : args) {
            String t = a.text();
            if (!t.matches("\\$[A-Za-z_][A-Za-z0-9_]*(\\s[\\s\\S]*)?")) {
                throw new SynthesisException(null, null, a.line(), a.column(),
                        "define: expected '$NAME value', found '" + a.normalized() + "'");
            }
            int sp = 1;
            while (sp < t.length() && !Character.isWhitespace(t.charAt(sp))) {
                sp++;
            }
            vars.put(t.substring(1, sp), t.substring(sp).trim());
        }
        if (args.isEmpty()) {
            throw error(at, "define: expected '$NAME value'");
        }
    }

    private void elementclass() {
        int namePos = pos;
        String name = word();
        if (name == null) {
            throw error(pos, "expected a class name after 'elementclass', found " + found());
        }
        if (!accept("{")) {
            throw error(pos, "expected '{' after 'elementclass " + name + "', found " + found());
        }
        List<String> formals = new ArrayList<>();
        int save = pos;
        skip();
        if (peek("$")) {
            while (true) {
                skip();
                if (!accept("$")) {
                    throw error(pos, "expected '$formal' in elementclass " + name + ", found " + found());
                }
                String f = word();
                if (f == null) {
                    throw error(pos, "expected a formal parameter name after '$'");
                }
                formals.add(f);
                if (accept("|")) {
                    break;
                }
                if (!accept(",")) {
                    throw error(pos, "expected ',' or '|' after formal parameter, found " + found());
                }
            }
        } else {
            pos = save;
        }
        int bodyStart = pos;
        int depth = 1;
        while (depth > 0) {
            skip();
            if (pos >= end) {
                throw error(namePos, "elementclass " + name + ": missing '}'");
            }
            char c = src.charAt(pos);
            if (c == '(') {
                args(false);
                continue;
            }
            if (c == '{') {
                depth++;
            } else if (c == '}') {
                depth--;
            }
            pos++;
        }
        Map<String, Compound> scope = new HashMap<>(compounds);
        Compound def = new Compound(name, bodyStart, pos - 1, formals, scope);
        scope.put(name, def);
        compounds.put(name, def);
    }

    private void connectionChain() {
        Node prev = null;
        int prevOut = 0;
        int arrowPos = pos;
        while (true) {
            int inPort = 0;
            if (accept("[")) {
                inPort = portNumber();
                if (prev == null) {
                    throw error(arrowPos, "input port '[" + inPort + "]' with no connection before it");
                }
            }
            Node n = endpoint(prev == null);
            if (prev != null) {
                connect(prev, prevOut, n, inPort, arrowPos);
            }
            int outPort = 0;
            int outPos = pos;
            boolean hasOut = accept("[");
            if (hasOut) {
                outPort = portNumber();
            }
            skip();
            arrowPos = pos;
            if (!accept("->")) {
                if (hasOut) {
                    throw error(pos, "expected '->' after output port, found " + found());
                }
                return;
            }
            prev = n;
            prevOut = outPort;
            if (outPos < 0) {
                throw new IllegalStateException();
            }
        }
    }

    private void connect(Node from, int outPort, Node to, int inPort, int at) {
        if (from.out == null) {
            throw error(at, "'output' cannot be the source of a connection inside an elementclass");
        }
        if (to.in == null) {
            throw error(at, "'input' cannot be the target of a connection inside an elementclass");
        }
        out.connections.add(new Connection(from.out, outPort, to.in, inPort, lineOf(at), colOf(at)));
    }

    /** One element in a connection chain: declaration, anonymous element, compound instance or reference. */
    private Node endpoint(boolean statementStart) {
        skip();
        int s = pos;
        if (peek("{")) {
            throw error(pos, "unsupported construct: anonymous compound element '{ ... }'");
        }
        String w = word();
        if (w == null) {
            throw error(pos, "expected an element name or class, found " + found());
        }
        if (statementStart && peek(",")) {
            return multiDeclaration(w, s);
        }
        if (accept("::")) {
            int classPos = pos;
            skip();
            classPos = pos;
            String cls = word();
            if (cls == null) {
                throw error(pos, "expected a class name after '" + w + " ::', found " + found());
            }
            List<Arg> args = peek("(") ? args() : List.of();
            return declare(w, s, cls, classPos, args, false);
        }
        if (w.equals("input") && inputTunnel != null) {
            return new Node(null, inputTunnel.out);
        }
        if (w.equals("output") && outputTunnel != null) {
            return new Node(outputTunnel.in, null);
        }
        if (peek("(")) {
            List<Arg> args = args();
            return declare(null, s, w, s, args, true);
        }
        Node known = names.get(w);
        if (known != null) {
            return known;
        }
        return declare(null, s, w, s, List.of(), true);
    }

    private Node multiDeclaration(String first, int firstPos) {
        List<String> ns = new ArrayList<>();
        List<Integer> ps = new ArrayList<>();
        ns.add(first);
        ps.add(firstPos);
        while (accept(",")) {
            skip();
            ps.add(pos);
            String w = word();
            if (w == null) {
                throw error(pos, "expected an element name after ',', found " + found());
            }
            ns.add(w);
        }
        if (!accept("::")) {
            throw error(pos, "expected '::' after element names, found " + found());
        }
        skip();
        int classPos = pos;
        String cls = word();
        if (cls == null) {
            throw error(pos, "expected a class name after '::', found " + found());
        }
        List<Arg> args = peek("(") ? args() : List.of();
        Node last = null;
        for (int i = 0; i < ns.size(); i++) {
            last = declare(ns.get(i), ps.get(i), cls, classPos, args, false);
        }
        if (peek("->") || peek("[")) {
            throw error(pos, "a multi-element declaration cannot take part in a connection");
        }
        return last;
    }

    private Node declare(String name, int namePos, String cls, int classPos, List<Arg> args, boolean anonymous) {
        created++;
        String local = anonymous ? cls + "@" + created : name;
        if (!anonymous) {
            if (names.containsKey(name)) {
                ElementDecl prev = names.get(name).in != null ? names.get(name).in : names.get(name).out;
                throw new SynthesisException(null, name, lineOf(namePos), colOf(namePos),
                        "element '" + name + "' redeclared (first declared at " + prev.line() + ":" + prev.column()
                                + ")");
            }
            if (name.equals("input") || name.equals("output")) {
                throw error(namePos, "'" + name + "' is reserved for elementclass ports");
            }
        }
        String full = prefix + local;
        int at = anonymous ? classPos : namePos;
        Compound comp = compounds.get(cls);
        Node node;
        if (comp != null) {
            node = instantiate(comp, full, args, at);
        } else {
            ElementDecl e = new ElementDecl(full, cls, args, lineOf(at), colOf(at), anonymous);
            out.elements.add(e);
            node = new Node(e, e);
        }
        if (!anonymous) {
            names.put(name, node);
        }
        return node;
    }

    private Node instantiate(Compound comp, String full, List<Arg> args, int at) {
        if (++out.depth > 32) {
            throw error(at, "elementclass " + comp.name + " expands recursively");
        }
        if (args.size() != comp.formals.size()) {
            throw error(at, "elementclass " + comp.name + " takes " + comp.formals.size() + " argument(s), got "
                    + args.size());
        }
        ElementDecl in = new ElementDecl(full + "/input", TUNNEL, List.of(), lineOf(at), colOf(at), false);
        ElementDecl outT = new ElementDecl(full + "/output", TUNNEL, List.of(), lineOf(at), colOf(at), false);
        out.elements.add(in);
        out.elements.add(outT);
        Map<String, String> innerVars = new HashMap<>(vars);
        for (int i = 0; i < args.size(); i++) {
            innerVars.put(comp.formals.get(i), args.get(i).text());
        }
        ClickParser body = new ClickParser(src, comp.bodyStart, comp.bodyEnd, lineStarts, out, full + "/",
                innerVars, new HashMap<>(comp.scope), new Node(in, in), new Node(outT, outT));
        body.statements();
        out.depth--;
        return new Node(in, outT);
    }

    /** Reads {@code ( ... )}: splits at top-level commas, drops comments, substitutes $variables. */
    private List<Arg> args() {
        return args(true);
    }

    private List<Arg> args(boolean substitute) {
        skip();
        int open = pos;
        pos++;
        List<Arg> result = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int curStart = -1;
        int depth = 0;
        while (true) {
            if (pos >= end) {
                throw error(open, "missing ')' for '(' opened here");
            }
            char c = src.charAt(pos);
            if (c == '/' && pos + 1 < end && (src.charAt(pos + 1) == '/' || src.charAt(pos + 1) == '*')) {
                int p = pos;
                skip();
                if (curStart >= 0) {
                    cur.append(' ');
                }
                if (pos == p) {
                    pos++;
                }
                continue;
            }
            if (c == '"' || c == '\'') {
                int q = pos++;
                while (pos < end && src.charAt(pos) != c) {
                    if (src.charAt(pos) == '\\') {
                        pos++;
                    }
                    pos++;
                }
                if (pos >= end) {
                    throw error(q, "unterminated string");
                }
                pos++;
                if (curStart < 0) {
                    curStart = q;
                }
                cur.append(src, q, pos);
                continue;
            }
            if (substitute && c == '$' && pos + 1 < end && wordStart(src.charAt(pos + 1))) {
                int v = pos++;
                while (pos < end && (Character.isLetterOrDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
                    pos++;
                }
                String name = src.substring(v + 1, pos);
                String val = vars.get(name);
                if (val == null) {
                    throw error(v, "undefined variable '$" + name + "'");
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
                        throw error(pos, "empty argument");
                    }
                    result.add(new Arg(t, lineOf(curStart), colOf(curStart)));
                }
                cur.setLength(0);
                curStart = -1;
                pos++;
                if (c == ')') {
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

    // ---- compound flattening ------------------------------------------------------------------------------

    /** Replaces every tunnel by direct connections from its predecessors to its successors, port by port. */
    private static void eliminateTunnels(Output out) {
        List<ElementDecl> tunnels = new ArrayList<>();
        for (ElementDecl e : out.elements) {
            if (e.className().equals(TUNNEL)) {
                tunnels.add(e);
            }
        }
        List<Connection> conns = new ArrayList<>(out.connections);
        for (ElementDecl t : tunnels) {
            List<Connection> ins = new ArrayList<>();
            List<Connection> outs = new ArrayList<>();
            List<Connection> rest = new ArrayList<>();
            for (Connection c : conns) {
                if (c.to() == t && c.from() == t) {
                    continue;
                }
                if (c.to() == t) {
                    ins.add(c);
                } else if (c.from() == t) {
                    outs.add(c);
                } else {
                    rest.add(c);
                }
            }
            for (Connection a : ins) {
                for (Connection b : outs) {
                    if (a.inPort() == b.outPort()) {
                        rest.add(new Connection(a.from(), a.outPort(), b.to(), b.inPort(), a.line(), a.column()));
                    }
                }
            }
            conns = rest;
        }
        out.connections.clear();
        out.connections.addAll(conns);
        out.elements.removeIf(e -> e.className().equals(TUNNEL));
    }
}
