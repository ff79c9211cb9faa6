package org.metron.synth;

import java.util.List;
import java.util.Objects;

/**
 * A traffic class: the packets the whole chain treats identically, and the one list of operations it applies.
 * <p>
 * Its packets are given by {@link #filters()}: header-space entries (IPClassifier pattern syntax) that take
 * effect in the chain's global first-match order; an entry claims a packet only if no earlier entry of any
 * class did. The class id is the CCCC part of the MAC tag (docs/contracts.md#tags). Immutable.
 */
public final class TrafficClass {
    /** Class id used by TO_SERVER for packets the offload device could not classify. */
    public static final int UNCLASSIFIED = 0xFFFF;
    /** Class id used by TO_SERVER in reply rules for reply packets the device could not classify. */
    public static final int REPLY_UNCLASSIFIED = 0xFFFD;

    private final int id;
    private final List<String> filters;
    private final int egress;
    private final List<HeaderWrite> statelessWrites;
    private final boolean decTtl;
    private final String statefulKey;
    private final String operations;

    /**
     * Creates a class.
     *
     * @param id              class id (index in {@link CompiledChain#classes()})
     * @param filters         the class's filter entries in global priority order, IPClassifier syntax
     * @param egress          egress index, or -1 if the class drops its packets
     * @param statelessWrites header writes that need no state, in application order
     * @param decTtl          true if the chain decrements TTL / hop limit
     * @param statefulKey     canonical text of the stateful operations ("" if none); equal keys = same group
     * @param operations      human-readable operation list, NF by NF
     */
    public TrafficClass(int id, List<String> filters, int egress, List<HeaderWrite> statelessWrites, boolean decTtl,
                        String statefulKey, String operations) {
        this.id = id;
        this.filters = List.copyOf(filters);
        this.egress = egress;
        this.statelessWrites = List.copyOf(statelessWrites);
        this.decTtl = decTtl;
        this.statefulKey = Objects.requireNonNull(statefulKey, "statefulKey");
        this.operations = Objects.requireNonNull(operations, "operations");
    }

    public int id() {
        return id;
    }

    /** Filter entries in global first-match order, IPClassifier pattern syntax. */
    public List<String> filters() {
        return filters;
    }

    /** True if the chain drops this class. */
    public boolean drops() {
        return egress < 0;
    }

    /** Egress index (into {@link CompiledChain#egress()}), -1 if dropped. */
    public int egress() {
        return egress;
    }

    public List<HeaderWrite> statelessWrites() {
        return statelessWrites;
    }

    public boolean decTtl() {
        return decTtl;
    }

    /** True if the class needs per-flow state (NAPT, LB, DPI, flow monitors) and so a server core. */
    public boolean stateful() {
        return !statefulKey.isEmpty();
    }

    /** Canonical text of the stateful operations; "" if none. */
    public String statefulKey() {
        return statefulKey;
    }

    /** Human-readable operations, NF by NF. */
    public String operations() {
        return operations;
    }

    @Override
    public String toString() {
        return "class " + id + " [" + operations + "]";
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TrafficClass)) {
            return false;
        }
        TrafficClass c = (TrafficClass) o;
        return id == c.id && egress == c.egress && decTtl == c.decTtl && filters.equals(c.filters)
                && statelessWrites.equals(c.statelessWrites) && statefulKey.equals(c.statefulKey)
                && operations.equals(c.operations);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, filters, egress, statelessWrites, decTtl, statefulKey, operations);
    }
}
