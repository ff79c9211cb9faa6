package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The flow state a chain's server groups declare: each group's {@code SynthRewriter} with a {@code CAPACITY}
 * (flows per core, carried from its NFs' rewriters; docs/contracts.md#synthrewriter) reserves that many flows of
 * the agent's flow memory when deployed. Without a declared capacity a table grows into whatever memory is left,
 * as Click's does, and asks nothing of placement.
 */
public final class FlowStateDemand {
    /** One table: where it is and the capacity it declares. */
    public static final class Table {
        final int group;
        final String element;
        final long capacity;

        Table(int group, String element, long capacity) {
            this.group = group;
            this.element = element;
            this.capacity = capacity;
        }
    }

    private static final Pattern REWRITER = Pattern.compile("(\\w+) :: SynthRewriter\\(([^)]*)\\)");
    private static final Pattern CAPACITY = Pattern.compile("\\bCAPACITY (\\d+)");
    private static final FlowStateDemand NONE = new FlowStateDemand(List.of());

    private final List<Table> tables;

    private FlowStateDemand(List<Table> tables) {
        this.tables = ImmutableList.copyOf(tables);
    }

    public static FlowStateDemand none() {
        return NONE;
    }

    /** The declared tables of a compiled chain's groups. */
    public static FlowStateDemand of(CompiledChain chain) {
        ImmutableList.Builder<Table> b = ImmutableList.builder();
        for (ClassGroup g : chain.groups()) {
            Matcher m = REWRITER.matcher(g.clickConfig());
            while (m.find()) {
                Matcher c = CAPACITY.matcher(m.group(2));
                if (c.find()) {
                    b.add(new Table(g.id(), m.group(1), Long.parseLong(c.group(1))));
                }
            }
        }
        List<Table> t = b.build();
        return t.isEmpty() ? NONE : new FlowStateDemand(t);
    }

    public boolean isEmpty() {
        return tables.isEmpty();
    }

    /**
     * Why a server whose agent reports {@code freeBytes} of flow memory and at most {@code bytesPerFlow} per
     * declared flow cannot hold these tables (naming the largest one, its capacity and the memory), or "" if it
     * can.
     */
    public String shortfall(long freeBytes, long bytesPerFlow) {
        long flows = tables.stream().mapToLong(t -> t.capacity).sum();
        long need = flows * bytesPerFlow;
        if (tables.isEmpty() || need <= freeBytes && bytesPerFlow > 0) {
            return "";
        }
        Table big = tables.stream().max((a, b) -> Long.compare(a.capacity, b.capacity)).get();
        if (bytesPerFlow <= 0) {
            return "flow state: group " + big.group + "'s " + big.element + " (SynthRewriter) declares CAPACITY "
                    + big.capacity + " but the agent reports no flow memory (flow_entry_bytes 0: an older agent)";
        }
        return String.format(Locale.ROOT, "flow state: group %d's %s (SynthRewriter) declares CAPACITY %d%s, %s of "
                        + "flow memory in all; the agent has %s free", big.group, big.element, big.capacity,
                tables.size() > 1 ? " (with the chain's " + (tables.size() - 1) + " other declared table(s): "
                        + flows + " flows)" : "",
                megabytes(need), megabytes(freeBytes));
    }

    private static String megabytes(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1048576.0);
    }
}
