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

    public void trace(String s) {
        if (trace != null) {
            trace.add(s);
        }
    }
}
