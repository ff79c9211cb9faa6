package org.metron.synth.core;

import java.util.List;

/**
 * One stateful element a class passes through: a flow rewriter with its pattern pool (NAPT, LB: one pattern
 * is chosen per new flow), a rewriter's reply input undoing that pool's mapping for replies, or a DPI element
 * with its signatures, or a black-box NF (docs/blackbox.md), which cuts the steps into the parts before and
 * after it. Immutable.
 */
public final class StatefulStep {
    /** Kinds of stateful work. */
    public enum Kind { REWRITE, REPLY, DPI, SPIN, BLACKBOX }

    public final Kind kind;
    /** {@code nf/element[input]}: which element, for traces. */
    public final String where;
    /** Rewrite pool (REWRITE; REPLY: the forward pool whose mappings it undoes), in the element's order. */
    public final List<RewritePattern> pool;
    /** "roundrobin" or "maglev" for pools. */
    public final String select;
    /** DPI signatures as written (DPI). */
    public final List<String> signatures;
    /** Cycles spent per packet (SPIN: software-only, stateless work kept in the group config). */
    public final long cycles;
    /**
     * Flows the rewriter holds per core (REWRITE/REPLY: its CAPACITY / MAPPING_CAPACITY), 0 = none declared: as
     * Click's, its table then holds every flow.
     */
    public final long capacity;
    /** The rewriter's idle timeouts per flow state (REWRITE/REPLY; Click's defaults for the other kinds). */
    public final IdleTimeouts timeouts;
    private final int hash;

    private StatefulStep(Kind kind, String where, List<RewritePattern> pool, String select, List<String> sigs) {
        this(kind, where, pool, select, sigs, 0, 0, IdleTimeouts.CLICK_DEFAULTS);
    }

    private StatefulStep(Kind kind, String where, List<RewritePattern> pool, String select, List<String> sigs,
                         long cycles, long capacity, IdleTimeouts timeouts) {
        this.cycles = cycles;
        this.capacity = capacity;
        this.timeouts = timeouts;
        this.kind = kind;
        this.where = where;
        this.pool = List.copyOf(pool);
        this.select = select;
        this.signatures = List.copyOf(sigs);
        this.hash = java.util.Objects.hash(kind, this.pool, select, this.signatures, cycles, capacity, timeouts);
    }

    /** Equal = the same stateful work (where it happens is left out: it does not change the operation). */
    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof StatefulStep)) {
            return false;
        }
        StatefulStep s = (StatefulStep) o;
        return hash == s.hash && kind == s.kind && cycles == s.cycles && capacity == s.capacity
                && timeouts.equals(s.timeouts)
                && select.equals(s.select) && pool.equals(s.pool) && signatures.equals(s.signatures);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    public static StatefulStep rewrite(String where, List<RewritePattern> pool, String select) {
        return rewrite(where, pool, select, 0);
    }

    /** A rewrite whose element declares a capacity (flows per core; 0 = none), with Click's default timeouts. */
    public static StatefulStep rewrite(String where, List<RewritePattern> pool, String select, long capacity) {
        return rewrite(where, pool, select, capacity, IdleTimeouts.CLICK_DEFAULTS);
    }

    /** A rewrite whose element declares a capacity (0 = none) and keeps idle flows for {@code timeouts}. */
    public static StatefulStep rewrite(String where, List<RewritePattern> pool, String select, long capacity,
                                       IdleTimeouts timeouts) {
        return new StatefulStep(Kind.REWRITE, where, pool, select, List.of(), 0, capacity, timeouts);
    }

    /** A reply input of a rewriter: restores the tuple of the flow that {@code pool} rewrote. */
    public static StatefulStep reply(String where, List<RewritePattern> pool, String select) {
        return reply(where, pool, select, 0);
    }

    public static StatefulStep reply(String where, List<RewritePattern> pool, String select, long capacity) {
        return reply(where, pool, select, capacity, IdleTimeouts.CLICK_DEFAULTS);
    }

    public static StatefulStep reply(String where, List<RewritePattern> pool, String select, long capacity,
                                     IdleTimeouts timeouts) {
        return new StatefulStep(Kind.REPLY, where, pool, select, List.of(), 0, capacity, timeouts);
    }

    public static StatefulStep dpi(String where, List<String> signatures) {
        return new StatefulStep(Kind.DPI, where, List.of(), "", signatures);
    }

    /**
     * A black-box NF: {@code where} is its name (the same on both sides of the checker: the chain's NF, the group
     * config's {@code BlackBoxNF NAME}); {@code what} what it is and may do ({@link
     * org.metron.synth.BlackBoxSpec}), compared as a DPI step's signatures are.
     */
    public static StatefulStep blackBox(String where, String what) {
        return new StatefulStep(Kind.BLACKBOX, where, List.of(), "", List.of(where, what));
    }

    public static StatefulStep spin(String where, long cycles) {
        return new StatefulStep(Kind.SPIN, where, List.of(), "", List.of(), cycles, 0, IdleTimeouts.CLICK_DEFAULTS);
    }

    @Override
    public String toString() {
        if (kind == Kind.SPIN) {
            return "spin@" + where + "(" + cycles + ")";
        }
        if (kind == Kind.BLACKBOX) {
            return "blackbox@" + where;
        }
        if (kind == Kind.REPLY) {
            return "reply@" + where + pool;
        }
        return kind == Kind.REWRITE ? "rewrite@" + where + pool + (pool.size() > 1 ? " " + select : "")
                + (capacity > 0 ? " capacity " + capacity : "")
                + (timeouts.equals(IdleTimeouts.CLICK_DEFAULTS) ? "" : " " + timeouts) : "dpi@" + where + signatures;
    }
}
