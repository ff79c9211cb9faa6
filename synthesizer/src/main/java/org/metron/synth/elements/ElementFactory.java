package org.metron.synth.elements;

import org.metron.synth.click.ClickConfig;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

import java.util.Set;

/** Maps Click class names to element semantics; unknown classes are a clear error. */
public final class ElementFactory {
    /** Classes with semantics, for error messages and docs. */
    public static final Set<String> KNOWN = Set.of("FromDevice", "FromDPDKDevice", "ToDevice", "ToDPDKDevice",
            "input", "output", "Discard", "Counter", "AverageCounter", "Queue", "SetIPChecksum", "Print",
            "Strip", "Unstrip", "CheckIPHeader", "MarkIPHeader", "DecIPTTL", "EtherEncap", "EtherRewrite",
            "StoreEtherAddress", "VLANEncap", "VLANDecap", "IPFilter", "IPClassifier", "Classifier",
            "LookupIPRoute", "LinearIPLookup", "RadixIPLookup", "DirectIPLookup", "IPRewriter", "TCPRewriter",
            "UDPRewriter", "IPAddrRewriter", "RoundRobinIPMapper", "MaglevIPMapper", "IPRewriterPatterns", "DPI", "HyperscanDPI",
            "SynthRewriter", "SpinCycles", "BlackBoxNF");

    private ElementFactory() {
    }

    /**
     * Creates an element.
     *
     * @throws org.metron.synth.SynthesisException for unknown classes or bad arguments (NF, element, line:col)
     */
    public static Element create(String nf, ElementDecl d, ClickConfig cfg) {
        switch (d.className()) {
            case "FromDevice": case "FromDPDKDevice": case "input":
                return new Device(nf, d, true);
            case "ToDevice": case "ToDPDKDevice": case "output":
                return new Device(nf, d, false);
            case "Discard":
                return new Discard(nf, d);
            case "Counter": case "AverageCounter": case "Queue": case "SetIPChecksum": case "Print":
                return new NoOp(nf, d);
            case "Strip":
                return new Strip(nf, d, false);
            case "Unstrip":
                return new Strip(nf, d, true);
            case "CheckIPHeader": case "MarkIPHeader":
                return new MarkIp(nf, d);
            case "DecIPTTL":
                return new DecIpTtl(nf, d);
            case "EtherEncap": case "EtherRewrite": case "StoreEtherAddress": case "VLANEncap": case "VLANDecap":
                return new L2Write(nf, d);
            case "IPFilter": case "IPClassifier":
                return new IpClassifier(nf, d);
            case "Classifier":
                return new EtherClassifier(nf, d);
            case "LookupIPRoute": case "LinearIPLookup": case "RadixIPLookup": case "DirectIPLookup":
                return new RouteLookup(nf, d);
            case "IPRewriter": case "TCPRewriter": case "UDPRewriter": case "IPAddrRewriter":
                return new Rewriter(nf, d, cfg);
            case "RoundRobinIPMapper": case "MaglevIPMapper": case "IPRewriterPatterns":
                return new Info(nf, d);
            case "DPI": case "HyperscanDPI":
                return new Dpi(nf, d);
            case "SynthRewriter":
                return new SynthRewriterElement(nf, d);
            case "SpinCycles":
                return new SpinCyclesElement(nf, d);
            case "BlackBoxNF":
                return new BlackBoxElement(nf, d);
            default:
                throw new org.metron.synth.SynthesisException(nf, d.name(), d.line(), d.column(),
                        "unknown element class '" + d.className() + "'");
        }
    }

    /** Configuration-only elements (pattern pools referenced by rewriters): no ports. */
    static final class Info extends Element {
        Info(String nf, ElementDecl d) {
            super(nf, d);
        }

        @Override
        public int inputs() {
            return 0;
        }

        @Override
        public int outputs() {
            return 0;
        }

        @Override
        public int push(Packet p, int in, Run run) {
            return Out.DROP;
        }

        @Override
        public void walk(SymState s, int in, Out out) {
            throw error(decl.className() + " has no ports");
        }
    }
}
