package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.OutsideModelException;
import org.metron.synth.packet.Packet;

import java.util.Set;

/**
 * CheckIPHeader / MarkIPHeader ([OFFSET] or OFFSET n): marks the IP header at the current position + OFFSET.
 * Metron's CheckIPHeader accepts IPv4 and IPv6 (as the agent's does). Packets of the model are well-formed;
 * frames that are not ({@link HeaderCheck}: bad checksum, unparseable, no IP header at byte 14) leave
 * CheckIPHeader by its error output 1 (dropped when unconnected), as in Click. Synthesis walks output 0 only:
 * such frames are the checkers' concern (docs/contracts.md#offload-exceptions). MarkIPHeader checks nothing,
 * so what follows it on such a frame is outside the model.
 */
public final class MarkIp extends Element {
    private final int offset;

    MarkIp(String nf, ElementDecl decl) {
        super(nf, decl);
        Args a = new Args(decl.args(), Set.of("OFFSET", "INTERFACES", "BADSRC", "GOODDST", "VERBOSE", "DETAILS",
                "CHECKSUM"));
        Arg off = a.keywords.get("OFFSET");
        if (off == null && !a.positional.isEmpty() && a.positional.get(0).text().matches("\\d+")) {
            off = a.positional.get(0);
        }
        offset = off == null ? 0 : Integer.parseInt(off.text().trim());
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return decl.className().equals("CheckIPHeader") ? 2 : 1;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        if (p.check != HeaderCheck.VALID) {
            if (!decl.className().equals("CheckIPHeader")) {
                throw new OutsideModelException(id() + " marks a frame without a valid IP header (" + p.check + ")");
            }
            run.droppedBy = id() + " (" + p.check + ")";
            run.headerRejected = true;
            return 1;
        }
        run.ipMarked = run.stripped + offset == 14;
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        if (s.stripped + offset != 14) {
            throw error(decl.className() + " would look for the IP header at byte " + (s.stripped + offset)
                    + " of the frame, but it starts at byte 14 (use Strip(14) first or OFFSET 14)");
        }
        out.emit(0, s.markIp());
    }
}
