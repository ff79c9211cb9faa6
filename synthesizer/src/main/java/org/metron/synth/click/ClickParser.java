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
 * The grammar lives here; tokens come from {@link ClickLexer}, element configuration strings are split by
 * {@link ConfigArgs}. Compound instances are expanded by re-parsing the class body ({@link ElementClass}) under
 * a name prefix; the body's {@code input}/{@code output} become {@link Tunnels} that are bypassed once the whole
 * file is read. Errors are {@link SynthesisException}s with line:col.
 */
public final class ClickParser {
    /** State shared by the top-level parse and every compound expansion. */
    private static final class Output {
        final List<ElementDecl> elements = new ArrayList<>();
        final List<Connection> connections = new ArrayList<>();
        int depth;
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

    private final ClickLexer lx;
    private final Output out;
    private final String prefix;
    private final Map<String, String> vars;
    private final Map<String, ElementClass> compounds;
    private final Map<String, Node> names = new HashMap<>();
    private final Node inputTunnel;
    private final Node outputTunnel;
    private int created;

    private ClickParser(ClickLexer lx, Output out, String prefix, Map<String, String> vars,
                        Map<String, ElementClass> compounds, Node inputTunnel, Node outputTunnel) {
        this.lx = lx;
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
        Output out = new Output();
        new ClickParser(ClickLexer.of(text), out, "", new HashMap<>(), new HashMap<>(), null, null).statements();
        Tunnels.eliminate(out.elements, out.connections);
        return new ClickConfig(out.elements, out.connections);
    }

    private SynthesisException error(int p, String msg) {
        return lx.error(p, msg);
    }

    private String found() {
        return lx.found();
    }

    /** Reads {@code ( ... )} with $variables substituted. */
    private List<Arg> args() {
        return ConfigArgs.read(lx, vars);
    }

    // ---- statements ---------------------------------------------------------------------------------------

    private void statements() {
        while (true) {
            if (lx.atEnd()) {
                return;
            }
            if (lx.accept(";")) {
                continue;
            }
            int s = lx.pos();
            String w = lx.word();
            if ("elementclass".equals(w)) {
                elementclass();
                continue;
            }
            if (("define".equals(w) || "require".equals(w)) && lx.peek("(")) {
                int argPos = lx.pos();
                List<Arg> args = ConfigArgs.read(lx, null);
                if (w.equals("define")) {
                    define(args, argPos);
                }
                endOfStatement();
                continue;
            }
            lx.seek(s);
            connectionChain();
            endOfStatement();
        }
    }

    private void endOfStatement() {
        if (lx.atEnd() || lx.accept(";")) {
            return;
        }
        throw error(lx.pos(), "expected ';' or '->', found " + found());
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
        int namePos = lx.pos();
        String name = lx.word();
        if (name == null) {
            throw error(lx.pos(), "expected a class name after 'elementclass', found " + found());
        }
        if (!lx.accept("{")) {
            throw error(lx.pos(), "expected '{' after 'elementclass " + name + "', found " + found());
        }
        List<String> formals = new ArrayList<>();
        int save = lx.pos();
        if (lx.peek("$")) {
            while (true) {
                if (!lx.accept("$")) {
                    throw error(lx.pos(), "expected '$formal' in elementclass " + name + ", found " + found());
                }
                String f = lx.word();
                if (f == null) {
                    throw error(lx.pos(), "expected a formal parameter name after '$'");
                }
                formals.add(f);
                if (lx.accept("|")) {
                    break;
                }
                if (!lx.accept(",")) {
                    throw error(lx.pos(), "expected ',' or '|' after formal parameter, found " + found());
                }
            }
        } else {
            lx.seek(save);
        }
        // the body is only delimited here (argument lists skipped whole, so braces in them do not count); each
        // instance reads it again with its own arguments
        int bodyStart = lx.pos();
        int depth = 1;
        while (depth > 0) {
            if (lx.atEnd()) {
                throw error(namePos, "elementclass " + name + ": missing '}'");
            }
            if (lx.peek("(")) {
                ConfigArgs.read(lx, null);
            } else if (lx.accept("{")) {
                depth++;
            } else if (lx.accept("}")) {
                depth--;
            } else {
                lx.advance();
            }
        }
        Map<String, ElementClass> scope = new HashMap<>(compounds);
        ElementClass def = new ElementClass(name, bodyStart, lx.pos() - 1, formals, scope);
        scope.put(name, def);
        compounds.put(name, def);
    }

    // ---- connections --------------------------------------------------------------------------------------

    private void connectionChain() {
        Node prev = null;
        int prevOut = 0;
        int arrowPos = lx.pos();
        while (true) {
            int inPort = 0;
            if (lx.accept("[")) {
                inPort = lx.portNumber();
                if (prev == null) {
                    throw error(arrowPos, "input port '[" + inPort + "]' with no connection before it");
                }
            }
            Node n = endpoint(prev == null);
            if (prev != null) {
                connect(prev, prevOut, n, inPort, arrowPos);
            }
            int outPort = 0;
            boolean hasOut = lx.accept("[");
            if (hasOut) {
                outPort = lx.portNumber();
            }
            lx.skip();
            arrowPos = lx.pos();
            if (!lx.accept("->")) {
                if (hasOut) {
                    throw error(lx.pos(), "expected '->' after output port, found " + found());
                }
                return;
            }
            prev = n;
            prevOut = outPort;
        }
    }

    private void connect(Node from, int outPort, Node to, int inPort, int at) {
        if (from.out == null) {
            throw error(at, "'output' cannot be the source of a connection inside an elementclass");
        }
        if (to.in == null) {
            throw error(at, "'input' cannot be the target of a connection inside an elementclass");
        }
        out.connections.add(new Connection(from.out, outPort, to.in, inPort, lx.line(at), lx.column(at)));
    }

    /** One element in a connection chain: declaration, anonymous element, compound instance or reference. */
    private Node endpoint(boolean statementStart) {
        lx.skip();
        int s = lx.pos();
        if (lx.peek("{")) {
            throw error(lx.pos(), "unsupported construct: anonymous compound element '{ ... }'");
        }
        String w = lx.word();
        if (w == null) {
            throw error(lx.pos(), "expected an element name or class, found " + found());
        }
        if (statementStart && lx.peek(",")) {
            return multiDeclaration(w, s);
        }
        if (lx.accept("::")) {
            lx.skip();
            int classPos = lx.pos();
            String cls = lx.word();
            if (cls == null) {
                throw error(lx.pos(), "expected a class name after '" + w + " ::', found " + found());
            }
            List<Arg> args = lx.peek("(") ? args() : List.of();
            return declare(w, s, cls, classPos, args, false);
        }
        if (w.equals("input") && inputTunnel != null) {
            return new Node(null, inputTunnel.out);
        }
        if (w.equals("output") && outputTunnel != null) {
            return new Node(outputTunnel.in, null);
        }
        if (lx.peek("(")) {
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
        while (lx.accept(",")) {
            lx.skip();
            ps.add(lx.pos());
            String w = lx.word();
            if (w == null) {
                throw error(lx.pos(), "expected an element name after ',', found " + found());
            }
            ns.add(w);
        }
        if (!lx.accept("::")) {
            throw error(lx.pos(), "expected '::' after element names, found " + found());
        }
        lx.skip();
        int classPos = lx.pos();
        String cls = lx.word();
        if (cls == null) {
            throw error(lx.pos(), "expected a class name after '::', found " + found());
        }
        List<Arg> args = lx.peek("(") ? args() : List.of();
        Node last = null;
        for (int i = 0; i < ns.size(); i++) {
            last = declare(ns.get(i), ps.get(i), cls, classPos, args, false);
        }
        if (lx.peek("->") || lx.peek("[")) {
            throw error(lx.pos(), "a multi-element declaration cannot take part in a connection");
        }
        return last;
    }

    // ---- declarations and compound instances --------------------------------------------------------------

    private Node declare(String name, int namePos, String cls, int classPos, List<Arg> args, boolean anonymous) {
        created++;
        String local = anonymous ? cls + "@" + created : name;
        if (!anonymous) {
            if (names.containsKey(name)) {
                ElementDecl prev = names.get(name).in != null ? names.get(name).in : names.get(name).out;
                throw new SynthesisException(null, name, lx.line(namePos), lx.column(namePos),
                        "element '" + name + "' redeclared (first declared at " + prev.line() + ":" + prev.column()
                                + ")");
            }
            if (name.equals("input") || name.equals("output")) {
                throw error(namePos, "'" + name + "' is reserved for elementclass ports");
            }
        }
        String full = prefix + local;
        int at = anonymous ? classPos : namePos;
        ElementClass comp = compounds.get(cls);
        Node node;
        if (comp != null) {
            node = instantiate(comp, full, args, at);
        } else {
            ElementDecl e = new ElementDecl(full, cls, args, lx.line(at), lx.column(at), anonymous);
            out.elements.add(e);
            node = new Node(e, e);
        }
        if (!anonymous) {
            names.put(name, node);
        }
        return node;
    }

    private Node instantiate(ElementClass comp, String full, List<Arg> args, int at) {
        if (++out.depth > 32) {
            throw error(at, "elementclass " + comp.name + " expands recursively");
        }
        if (args.size() != comp.formals.size()) {
            throw error(at, "elementclass " + comp.name + " takes " + comp.formals.size() + " argument(s), got "
                    + args.size());
        }
        ElementDecl in = Tunnels.tunnel(full + "/input", lx.line(at), lx.column(at));
        ElementDecl outT = Tunnels.tunnel(full + "/output", lx.line(at), lx.column(at));
        out.elements.add(in);
        out.elements.add(outT);
        Map<String, String> innerVars = new HashMap<>(vars);
        for (int i = 0; i < args.size(); i++) {
            innerVars.put(comp.formals.get(i), args.get(i).text());
        }
        ClickParser body = new ClickParser(lx.range(comp.bodyStart, comp.bodyEnd), out, full + "/", innerVars,
                new HashMap<>(comp.scope), new Node(in, in), new Node(outT, outT));
        body.statements();
        out.depth--;
        return new Node(in, outT);
    }
}
