package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;

/**
 * A failover move readied on a spare server while a lost server's deadline runs, as its owner recorded it before it
 * asked the spare's agent for anything: the intent every instance sees, like the scaling journal's entries. Its
 * placement's cores count as taken on the spare for every instance's placement until the move records the chain's
 * placement or the move is taken back; an instance that comes to own the chain without holding the move (its owner
 * stopped) takes back what the record names: the pipeline and NIC rules on the spare, the tags, and the switch rules
 * the move was to commit ({@link #switchRules}, recorded once planned, while the deadline runs): an owner that stops
 * after committing them and before recording the move leaves them on the switches, pointing at the spare.
 */
public final class PreparedMoveRecord {
    private final ChainId chainId;
    private final DeviceId from;
    private final Placement placement;
    private final List<Tag> tags;
    private final List<Long> nicRuleIds;
    private final List<InstalledRule> switchRules;

    /**
     * @param from       the lost server the chain leaves
     * @param placement  the new placement, on the spare
     * @param tags       the tags claimed for it
     * @param nicRuleIds the NIC rules asked of the spare's agent (none when its NIC has no rule table)
     */
    public PreparedMoveRecord(ChainId chainId, DeviceId from, Placement placement, List<Tag> tags,
                              List<Long> nicRuleIds) {
        this(chainId, from, placement, tags, nicRuleIds, List.of());
    }

    /** @param switchRules the switch rules the move commits (empty until planned) */
    public PreparedMoveRecord(ChainId chainId, DeviceId from, Placement placement, List<Tag> tags,
                              List<Long> nicRuleIds, List<InstalledRule> switchRules) {
        this.chainId = Objects.requireNonNull(chainId);
        this.from = Objects.requireNonNull(from);
        this.placement = Objects.requireNonNull(placement);
        if (placement.server().isEmpty()) {
            throw new IllegalArgumentException("a move readied for " + chainId + " places it on no server");
        }
        this.tags = ImmutableList.copyOf(tags);
        this.nicRuleIds = ImmutableList.copyOf(nicRuleIds);
        this.switchRules = ImmutableList.copyOf(switchRules);
    }

    /** The same move with the switch rules it commits, once planned. */
    public PreparedMoveRecord withSwitchRules(List<InstalledRule> rules) {
        return new PreparedMoveRecord(chainId, from, placement, tags, nicRuleIds, rules);
    }

    public ChainId chainId() {
        return chainId;
    }

    public DeviceId from() {
        return from;
    }

    public Placement placement() {
        return placement;
    }

    /** The spare server. */
    public DeviceId to() {
        return placement.server().orElseThrow();
    }

    public List<Tag> tags() {
        return tags;
    }

    public List<Long> nicRuleIds() {
        return nicRuleIds;
    }

    /** The switch rules the move commits; empty while they are being planned. */
    public List<InstalledRule> switchRules() {
        return switchRules;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof PreparedMoveRecord)) {
            return false;
        }
        PreparedMoveRecord r = (PreparedMoveRecord) o;
        return chainId.equals(r.chainId) && from.equals(r.from) && placement.equals(r.placement)
                && tags.equals(r.tags) && nicRuleIds.equals(r.nicRuleIds) && switchRules.equals(r.switchRules);
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, from, placement, tags, nicRuleIds, switchRules);
    }

    @Override
    public String toString() {
        return "move of " + chainId + " from " + from + " readied on " + to() + " cores " + placement.cores()
                + " tags " + tags;
    }
}
