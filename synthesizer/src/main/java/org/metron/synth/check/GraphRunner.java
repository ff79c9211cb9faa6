package org.metron.synth.check;

import org.metron.synth.core.NfGraph;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.elements.Device;
import org.metron.synth.elements.Element;
import org.metron.synth.packet.Packet;

/** Pushes a concrete packet through one NF graph until it reaches a ToDevice/output or is dropped. */
final class GraphRunner {
    /** Where a packet stopped: the sink device and its input port, or null sink for drop. */
    static final class Stop {
        final Device sink;
        final int port;

        Stop(Device sink, int port) {
            this.sink = sink;
            this.port = port;
        }
    }

    private static final int MAX_HOPS = 10_000;

    private GraphRunner() {
    }

    /** Runs from output 0 of a source device. */
    static Stop run(NfGraph g, Device source, Packet p, Run run) {
        NfGraph.Hop h = g.next(source, 0);
        for (int hops = 0; h != null && hops < MAX_HOPS; hops++) {
            Element e = h.to;
            if (e instanceof Device) {
                return new Stop((Device) e, h.port);
            }
            int out = e.push(p, h.port, run);
            if (out == Out.DROP) {
                return new Stop(null, -1);
            }
            if (run.trace != null) {
                run.trace(e.id() + " -> out " + out);
            }
            h = g.next(e, out);
            if (h == null && run.trace != null) {
                run.droppedBy = e.id() + " (output " + out + " unconnected)";
            }
        }
        return new Stop(null, -1);
    }
}
