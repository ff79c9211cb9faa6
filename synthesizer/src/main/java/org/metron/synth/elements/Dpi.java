package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.StatefulStep;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.Packet;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * DPI("literal", /regex/, ...): payload inspection with Snort-like content strings and regular expressions;
 * also the agent's HyperscanDPI("regex", ...), whose arguments are all regular expressions. A packet whose
 * payload contains any signature goes to output 1 (which must be a Discard or unconnected: matched packets are
 * dropped), others to output 0. Payload-dependent, so never offloaded: it is a stateful step of its class.
 * Signatures are normalized to PCRE-compatible regular expressions (literals escaped), the form the
 * synthesizer emits as HyperscanDPI arguments.
 */
public final class Dpi extends Element {
    private final List<String> signatures = new ArrayList<>();
    private final Pattern any;

    Dpi(String nf, ElementDecl decl) {
        super(nf, decl);
        if (decl.args().isEmpty()) {
            throw error("DPI needs at least one signature");
        }
        boolean hyperscan = decl.className().equals("HyperscanDPI");
        StringBuilder re = new StringBuilder();
        for (Arg a : decl.args()) {
            String t = a.text().trim();
            String body;
            if (hyperscan && t.matches("MODE\\s+\\S+")) {
                // The agent's MODE keyword: this model matches each packet alone, which is MODE BLOCK.
                if (!t.matches("MODE\\s+BLOCK")) {
                    throw error(a, "HyperscanDPI " + t + " is not supported in a chain: the synthesizer models DPI per"
                            + " packet (MODE BLOCK); stream mode per TCP flow is the agent's for standalone configurations");
                }
                continue;
            }
            if (hyperscan) {
                body = t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"")
                        ? t.substring(1, t.length() - 1).replace("\\\"", "\"") : t;
                try {
                    Pattern.compile(body);
                } catch (PatternSyntaxException e) {
                    throw error(a, "bad regular expression " + t + ": " + e.getDescription());
                }
            } else if (t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"")) {
                body = escape(t.substring(1, t.length() - 1).replace("\\\"", "\""));
            } else if (t.length() >= 2 && t.startsWith("/") && t.endsWith("/")) {
                body = t.substring(1, t.length() - 1);
                try {
                    Pattern.compile(body);
                } catch (PatternSyntaxException e) {
                    throw error(a, "bad regular expression " + t + ": " + e.getDescription());
                }
            } else {
                throw error(a, "DPI signature must be \"literal\" or /regex/, found '" + t + "'");
            }
            signatures.add(body);
            re.append(re.length() > 0 ? "|" : "").append("(?:").append(body).append(")");
        }
        if (signatures.isEmpty()) {
            throw error("DPI needs at least one signature");
        }
        any = Pattern.compile(re.toString(), Pattern.DOTALL);
    }

    /** A literal as a regular expression both Java and PCRE/Hyperscan read the same way. */
    static String escape(String literal) {
        StringBuilder sb = new StringBuilder();
        for (char c : literal.toCharArray()) {
            if ("\\^$.|?*+()[]{}/".indexOf(c) >= 0) {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return 2;
    }

    /** True if the payload contains a signature. */
    public boolean matches(byte[] payload) {
        return any.matcher(new String(payload, StandardCharsets.ISO_8859_1)).find();
    }

    @Override
    public int push(Packet p, int in, Run run) {
        run.steps.add(StatefulStep.dpi(id(), signatures));
        if (matches(p.payload)) {
            if (run.trace != null) {
                run.droppedBy = id() + " (signature matched)";
            }
            return Out.DROP;
        }
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        out.emit(0, s.step(StatefulStep.dpi(id(), signatures)));
    }
}
