package org.metron.synth.core;

import org.metron.synth.hs.Field;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Per-packet context of a concrete run (reference interpreter or synthesized-side evaluator): layer offset,
 * IP-header mark, choices for pools, the stateful steps taken and the fields whose value a flow table would
 * allocate at run time.
 */
public final class Run {
    public int stripped;
    public boolean ipMarked;
    private long choice;
    /** Number of different choice seeds that can make a difference here: the product of every choose(n)'s n. */
    public long span = 1;
    /** Stateful steps taken, in order. */
    public final List<StatefulStep> steps = new ArrayList<>();
    /** Fields set from a port range (value = "lo-hi"): compared by range, not by the concrete value. */
    public final Map<Field, String> allocated = new EnumMap<>(Field.class);
    /** Flow tables this run reads and records mappings in; null = fresh state, nothing recorded. */
    public FlowState state;
    /** Element that dropped the packet, for traces. */
    public String droppedBy;
    /** True once a CheckIPHeader rejected the frame ({@link org.metron.synth.packet.HeaderCheck}). */
    public boolean headerRejected;
    /** What black boxes do to packets that reach one (docs/blackbox.md). */
    public BlackBoxes boxes = BlackBoxes.IDENTITY;
    /** Each black box met, in order, with the packet as it reached it ({@code nf: headers}). */
    public final List<BoxInput> boxInputs = new ArrayList<>();
    /** Element-by-element trace, when enabled. */
    public final List<String> trace;

    /**
     * @param choice  seed for pool choices: choose(n) takes digits of it in mixed radix, so a product pool
     *                picks the same combination as the elements one by one
     * @param tracing whether to record a trace
     */
    public Run(long choice, boolean tracing) {
        this.choice = choice;
        this.trace = tracing ? new ArrayList<>() : null;
    }

    /** Picks an index in [0, n). */
    public int choose(int n) {
        int c = (int) Long.remainderUnsigned(choice, n);
        choice = Long.divideUnsigned(choice, n);
        span = span > Long.MAX_VALUE / n ? Long.MAX_VALUE : span * n;
        return c;
    }

    /** A black box met and the packet it was handed (a copy). */
    public static final class BoxInput {
        public final String nf;
        public final org.metron.synth.packet.Packet packet;

        BoxInput(String nf, org.metron.synth.packet.Packet packet) {
            this.nf = nf;
            this.packet = packet;
        }
    }

    /**
     * Hands p to black box nf (recording what it was handed and the box as a step of this run).
     *
     * @param what the box's declared behaviour, as the step compares it
     * @return false if the box dropped it
     */
    public boolean blackBox(String nf, String what, org.metron.synth.packet.Packet p) {
        boxInputs.add(new BoxInput(nf, p.copy()));
        steps.add(StatefulStep.blackBox(nf, what));
        trace("black box " + nf);
        boolean pass = boxes.pass(nf, p);
        if (!pass) {
            droppedBy = "black box " + nf;
        }
        return pass;
    }

    public void trace(String s) {
        if (trace != null) {
            trace.add(s);
        }
    }
}
