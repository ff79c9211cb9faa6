package org.metron.synth.check;

import org.metron.synth.InterfaceRef;
import org.metron.synth.core.BlackBoxes;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.NfGraph;
import org.metron.synth.core.Run;
import org.metron.synth.core.SynthOps;
import org.metron.synth.elements.Device;
import org.metron.synth.packet.Packet;

import java.util.EnumMap;

/** Runs the original chain NF by NF on one packet, each element with its concrete Click semantics. */
public final class ReferenceInterpreter {
    private final ChainModel chain;

    public ReferenceInterpreter(ChainModel chain) {
        this.chain = chain;
    }

    /**
     * Runs a forward packet on fresh state (the input is not modified).
     *
     * @param choice  pool-choice seed (see {@link Run#choose})
     * @param tracing whether to record the element trace
     */
    public Outcome run(Packet input, long choice, boolean tracing) {
        return run(input, choice, tracing, 0, null);
    }

    /**
     * Runs a packet entering at an ingress (0 forward, 1 replies) against flow tables.
     *
     * @param state flow tables the rewriters read and record in; null = fresh, unrecorded
     */
    public Outcome run(Packet input, long choice, boolean tracing, int ingress, FlowState state) {
        return run(input, choice, tracing, ingress, state, BlackBoxes.IDENTITY);
    }

    /** As {@link #run(Packet, long, boolean, int, FlowState)}, with what the chain's black boxes do. */
    public Outcome run(Packet input, long choice, boolean tracing, int ingress, FlowState state, BlackBoxes boxes) {
        Packet p = input.copy();
        Run run = new Run(choice, tracing);
        run.boxes = boxes;
        run.state = state;
        NfGraph g = chain.ingressNf(ingress);
        Device src = chain.ingress(ingress);
        Outcome o = walk(p, run, g, src);
        o.span = run.span;
        o.boxInputs = run.boxInputs;
        return o;
    }

    private Outcome walk(Packet p, Run run, NfGraph g, Device src) {
        for (int nfs = 0; nfs < 1000; nfs++) {
            if (run.trace != null) {
                run.trace("enter " + g.nf + "." + src.iface());
            }
            run.stripped = 0;
            run.ipMarked = false;
            GraphRunner.Stop stop = GraphRunner.run(g, src, p, run);
            if (stop.sink == null) {
                return new Outcome(-1, p, new EnumMap<>(run.allocated), "", run.droppedBy, run.trace,
                        run.headerRejected);
            }
            InterfaceRef next = chain.link(g.nf, stop.sink.iface());
            if (next == null) {
                int k = chain.egressIndex(g.nf, stop.sink.iface());
                return new Outcome(k, p, new EnumMap<>(run.allocated), SynthOps.canonical(run.steps),
                        k < 0 ? "dangling " + g.nf + "." + stop.sink.iface() : null, run.trace, run.headerRejected);
            }
            // black boxes in a row: each one gets the packet (may drop or rewrite it), then on from its output
            for (int boxes = 0; chain.blackBox(next.nf()) != null && boxes < 1000; boxes++) {
                String box = next.nf();
                if (!run.blackBox(box, chain.blackBox(box).elementArgs(box), p)) {
                    return new Outcome(-1, p, new EnumMap<>(run.allocated), "", run.droppedBy, run.trace,
                            run.headerRejected);
                }
                next = chain.link(box, org.metron.synth.BlackBoxSpec.OUTPUT);
                if (next == null) {
                    int k = chain.egressIndex(box, org.metron.synth.BlackBoxSpec.OUTPUT);
                    return new Outcome(k, p, new EnumMap<>(run.allocated), SynthOps.canonical(run.steps),
                            k < 0 ? "dangling " + box + ".out0" : null, run.trace, run.headerRejected);
                }
            }
            g = chain.nf(next.nf());
            src = g.source(next.iface());
        }
        return new Outcome(-1, p, new EnumMap<>(run.allocated), "", "loop", run.trace);
    }
}
