package org.metron.synth;

import java.util.List;
import java.util.Objects;

/**
 * What an {@link OffloadRule} does with a matching packet. Immutable.
 * <ul>
 *   <li>{@code DROP}: discard.</li>
 *   <li>{@code TO_SERVER(classId)}: tag with the class's MAC/VLAN tag (docs/contracts.md#tags) and send toward
 *       the server running the class's group. {@link TrafficClass#UNCLASSIFIED} means the device could not
 *       classify the packet (a rule it cannot hold came first): the server's software classifier decides.</li>
 *   <li>{@code TO_EGRESS(k)}: apply {@link #writes()} (and TTL decrement) and send to chain egress k; used for
 *       classes that need no server at all.</li>
 * </ul>
 */
public final class RuleAction {
    /** Action kinds. */
    public enum Type { DROP, TO_SERVER, TO_EGRESS }

    private static final RuleAction DROP_ACTION = new RuleAction(Type.DROP, -1, -1, List.of(), false);

    private final Type type;
    private final int classId;
    private final int egress;
    private final List<HeaderWrite> writes;
    private final boolean decTtl;

    private RuleAction(Type type, int classId, int egress, List<HeaderWrite> writes, boolean decTtl) {
        this.type = type;
        this.classId = classId;
        this.egress = egress;
        this.writes = List.copyOf(writes);
        this.decTtl = decTtl;
    }

    /** Drop. */
    public static RuleAction drop() {
        return DROP_ACTION;
    }

    /** Tag with the class's tag and send to its server. */
    public static RuleAction toServer(int classId) {
        return new RuleAction(Type.TO_SERVER, classId, -1, List.of(), false);
    }

    /** Write headers and send to egress k. */
    public static RuleAction toEgress(int egress, List<HeaderWrite> writes, boolean decTtl) {
        return new RuleAction(Type.TO_EGRESS, -1, egress, Objects.requireNonNull(writes, "writes"), decTtl);
    }

    public Type type() {
        return type;
    }

    /** Class id for TO_SERVER ({@link TrafficClass#UNCLASSIFIED} for software classification), else -1. */
    public int classId() {
        return classId;
    }

    /** Egress index for TO_EGRESS, else -1. */
    public int egress() {
        return egress;
    }

    /** Header writes for TO_EGRESS, in application order. */
    public List<HeaderWrite> writes() {
        return writes;
    }

    /** True if TO_EGRESS also decrements the IP TTL / hop limit. */
    public boolean decTtl() {
        return decTtl;
    }

    @Override
    public String toString() {
        switch (type) {
            case DROP:
                return "DROP";
            case TO_SERVER:
                return classId == TrafficClass.UNCLASSIFIED ? "TO_SERVER(unclassified)" : "TO_SERVER(" + classId + ")";
            default:
                return "TO_EGRESS(" + egress + (writes.isEmpty() ? "" : "," + writes) + (decTtl ? ",dec_ttl" : "")
                        + ")";
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RuleAction)) {
            return false;
        }
        RuleAction a = (RuleAction) o;
        return type == a.type && classId == a.classId && egress == a.egress && decTtl == a.decTtl
                && writes.equals(a.writes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, classId, egress, writes, decTtl);
    }
}
