package org.metron.synth.core;

import org.metron.synth.SynthesisException;
import org.metron.synth.click.ClickConfig;
import org.metron.synth.click.ClickParser;
import org.metron.synth.click.Connection;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.elements.DecIpTtlHook;
import org.metron.synth.elements.Device;
import org.metron.synth.elements.Discard;
import org.metron.synth.elements.Dpi;
import org.metron.synth.elements.Element;
import org.metron.synth.elements.ElementFactory;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One NF's element graph with checked ports: every connection names existing ports, each output port has at
 * most one connection (Click push semantics), DPI match outputs end in Discard, no cycles.
 */
public final class NfGraph {
    /** Where an output port leads. */
    public static final class Hop {
        public final Element to;
        public final int port;

        Hop(Element to, int port) {
            this.to = to;
            this.port = port;
        }
    }

    public final String nf;
    private final Map<String, Element> elements = new LinkedHashMap<>();
    private final Map<Element, Hop[]> next = new IdentityHashMap<>();
    private final Map<String, Device> sources = new HashMap<>();

    /**
     * Parses and checks an NF.
     *
     * @throws SynthesisException naming NF, element and line:col
     */
    public NfGraph(String nf, String click) {
        this.nf = nf;
        ClickConfig cfg;
        try {
            cfg = ClickParser.parse(click);
        } catch (SynthesisException e) {
            throw e.inNf(nf);
        }
        for (ElementDecl d : cfg.elements().values()) {
            Element e;
            try {
                e = ElementFactory.create(nf, d, cfg);
            } catch (SynthesisException ex) {
                throw ex.nf() == null ? new SynthesisException(nf, d.name(), ex.line() > 0 ? ex.line() : d.line(),
                        ex.line() > 0 ? ex.column() : d.column(), ex.reason()) : ex;
            }
            elements.put(d.name(), e);
            next.put(e, new Hop[e.outputs()]);
            if (e instanceof Device && ((Device) e).isSource()) {
                Device prev = sources.put(((Device) e).iface(), (Device) e);
                if (prev != null) {
                    throw e.error("input interface '" + ((Device) e).iface() + "' is read by two elements (also "
                            + prev.name() + ")");
                }
            }
        }
        for (Connection c : cfg.connections()) {
            Element from = elements.get(c.from().name());
            Element to = elements.get(c.to().name());
            if (c.outPort() >= from.outputs()) {
                throw new SynthesisException(nf, from.name(), c.line(), c.column(), from.decl().className() + " "
                        + from.name() + " has " + from.outputs() + " output(s), connection uses output " + c.outPort());
            }
            if (c.inPort() >= to.inputs()) {
                throw new SynthesisException(nf, to.name(), c.line(), c.column(), to.decl().className() + " "
                        + to.name() + " has " + to.inputs() + " input(s), connection uses input " + c.inPort());
            }
            Hop[] hops = next.get(from);
            if (hops[c.outPort()] != null) {
                throw new SynthesisException(nf, from.name(), c.line(), c.column(), "output " + c.outPort() + " of "
                        + from.name() + " is connected twice (push outputs take one connection)");
            }
            hops[c.outPort()] = new Hop(to, c.inPort());
            if (from instanceof Dpi && c.outPort() == 1 && !(to instanceof Discard)) {
                throw new SynthesisException(nf, from.name(), c.line(), c.column(), "unsupported construct: DPI "
                        + "output 1 (signature matched) must go to Discard");
            }
            if (c.outPort() == 1) {
                DecIpTtlHook.expiredPortConnected(from);
            }
        }
        checkAcyclic();
    }

    private void checkAcyclic() {
        Map<Element, Integer> color = new IdentityHashMap<>();
        for (Element e : elements.values()) {
            dfs(e, color);
        }
    }

    private void dfs(Element e, Map<Element, Integer> color) {
        Integer c = color.get(e);
        if (c != null) {
            if (c == 1) {
                throw e.error("cycle: element " + e.name() + " can receive its own output");
            }
            return;
        }
        color.put(e, 1);
        for (Hop h : next.get(e)) {
            if (h != null) {
                dfs(h.to, color);
            }
        }
        color.put(e, 2);
    }

    /** Where output port p of e leads, or null if unconnected. */
    public Hop next(Element e, int port) {
        Hop[] hops = next.get(e);
        return port < hops.length ? hops[port] : null;
    }

    /** The FromDevice element reading an interface, or null. */
    public Device source(String iface) {
        return sources.get(iface);
    }

    /** True if some ToDevice writes this interface. */
    public boolean hasSink(String iface) {
        for (Element e : elements.values()) {
            if (e instanceof Device && !((Device) e).isSource() && ((Device) e).iface().equals(iface)) {
                return true;
            }
        }
        return false;
    }

    /** Elements by name. */
    public Map<String, Element> elements() {
        return elements;
    }
}
