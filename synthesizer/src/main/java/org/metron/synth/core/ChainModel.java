package org.metron.synth.core;

import org.metron.synth.BlackBoxSpec;
import org.metron.synth.ChainLink;
import org.metron.synth.ChainSpec;
import org.metron.synth.InterfaceRef;
import org.metron.synth.NfSpec;
import org.metron.synth.SynthesisException;
import org.metron.synth.elements.Device;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A chain with every NF parsed and every link, ingress and egress resolved to real interfaces of the NFs'
 * Click configurations. Shared by synthesis and the reference interpreter.
 */
public final class ChainModel {
    public final ChainSpec spec;
    private final Map<String, NfGraph> nfs = new LinkedHashMap<>();
    private final Map<String, BlackBoxSpec> boxes = new LinkedHashMap<>();
    private final Map<String, InterfaceRef> links = new HashMap<>();
    private final Map<String, Integer> egress = new HashMap<>();

    /**
     * Parses every NF and checks the chain's references.
     *
     * @throws SynthesisException for bad Click or dangling links
     */
    public ChainModel(ChainSpec spec) {
        this.spec = spec;
        for (NfSpec nf : spec.nfs()) {
            if (nf.isBlackBox()) {
                boxes.put(nf.name(), nf.blackBox().get());
            } else {
                nfs.put(nf.name(), new NfGraph(nf.name(), nf.click()));
            }
        }
        if (!boxes.isEmpty() && spec.ingress().size() > 1) {
            throw new SynthesisException("unsupported construct: chain '" + spec.name() + "' has a reply ingress "
                    + "and black-box NF '" + boxes.keySet().iterator().next() + "': replies through a black box "
                    + "are not synthesized (docs/blackbox.md)");
        }
        for (InterfaceRef r : spec.ingress()) {
            if (boxes.containsKey(r.nf())) {
                throw new SynthesisException(r.nf(), null, 0, 0, "unsupported construct: ingress " + r + " is a "
                        + "black box; a chain enters at a Click NF (the switch classifies what enters)");
            }
        }
        if (spec.ingress().size() > 2) {
            throw new SynthesisException("unsupported construct: chain '" + spec.name() + "' has "
                    + spec.ingress().size() + " ingress interfaces; Metron synthesizes one forward ingress and "
                    + "at most one reply ingress (the second entry)");
        }
        for (ChainLink l : spec.links()) {
            requireSink(l.from(), "link from");
            requireSource(l.to(), "link to");
            if (links.put(l.from().toString(), l.to()) != null) {
                throw new SynthesisException("chain JSON: output interface " + l.from() + " is linked twice");
            }
        }
        for (InterfaceRef r : spec.ingress()) {
            requireSource(r, "ingress");
        }
        for (int k = 0; k < spec.egress().size(); k++) {
            InterfaceRef r = spec.egress().get(k);
            requireSink(r, "egress");
            if (links.containsKey(r.toString())) {
                throw new SynthesisException("chain JSON: " + r + " is both linked and an egress");
            }
            egress.put(r.toString(), k);
        }
    }

    private void requireSource(InterfaceRef r, String where) {
        if (boxes.containsKey(r.nf())) {
            if (!r.iface().equals(BlackBoxSpec.INPUT)) {
                throw new SynthesisException(r.nf(), null, 0, 0, "dangling edge: " + where + " " + r + " names no "
                        + "input of black-box NF '" + r.nf() + "' (its input is " + BlackBoxSpec.INPUT + ")");
            }
            return;
        }
        if (nfs.get(r.nf()).source(r.iface()) == null) {
            throw new SynthesisException(r.nf(), null, 0, 0, "dangling edge: " + where + " " + r
                    + " names no FromDevice/FromDPDKDevice interface of NF '" + r.nf() + "'");
        }
    }

    private void requireSink(InterfaceRef r, String where) {
        if (boxes.containsKey(r.nf())) {
            if (!r.iface().equals(BlackBoxSpec.OUTPUT)) {
                throw new SynthesisException(r.nf(), null, 0, 0, "dangling edge: " + where + " " + r + " names no "
                        + "output of black-box NF '" + r.nf() + "' (its output is " + BlackBoxSpec.OUTPUT + ")");
            }
            return;
        }
        if (!nfs.get(r.nf()).hasSink(r.iface())) {
            throw new SynthesisException(r.nf(), null, 0, 0, "dangling edge: " + where + " " + r
                    + " names no ToDevice/ToDPDKDevice interface of NF '" + r.nf() + "'");
        }
    }

    /**
     * The shortest idle timeout of the chain's stateful elements, in seconds (infinite without any): a flow
     * whose packets come further apart may meet new state.
     */
    public double shortestIdleTimeout() {
        return nfs.values().stream().flatMap(g -> g.elements().values().stream())
                .mapToDouble(org.metron.synth.elements.Element::shortestIdleTimeout).min()
                .orElse(Double.POSITIVE_INFINITY);
    }

    /** A Click NF's graph, or null for a black box. */
    public NfGraph nf(String name) {
        return nfs.get(name);
    }

    /** The black box of that name, or null for a Click NF. */
    public BlackBoxSpec blackBox(String name) {
        return boxes.get(name);
    }

    /** True if the chain has black-box NFs. */
    public boolean hasBlackBoxes() {
        return !boxes.isEmpty();
    }

    /** Number of ingresses: 1, or 2 when the chain has a reply ingress (index 1). */
    public int ingresses() {
        return spec.ingress().size();
    }

    /** The source element of ingress i (0 = forward traffic, 1 = replies entering from the egress side). */
    public Device ingress(int i) {
        InterfaceRef r = spec.ingress().get(i);
        return nfs.get(r.nf()).source(r.iface());
    }

    public NfGraph ingressNf(int i) {
        return nfs.get(spec.ingress().get(i).nf());
    }

    /** Where packets leaving nf.iface go next: the next NF's input, or null. */
    public InterfaceRef link(String nf, String iface) {
        return links.get(nf + "." + iface);
    }

    /** Egress index of nf.iface, or -1. */
    public int egressIndex(String nf, String iface) {
        Integer k = egress.get(nf + "." + iface);
        return k == null ? -1 : k;
    }

    /** Egress names, index = [k]output. */
    public List<String> egressNames() {
        List<String> out = new ArrayList<>();
        spec.egress().forEach(r -> out.add(r.toString()));
        return out;
    }
}
