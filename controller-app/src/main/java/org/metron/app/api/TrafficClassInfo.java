package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One traffic class of a chain as operators see it: its filter entries in first-match order (an entry claims a
 * packet only if no earlier entry of any class did, so a class is never the conjunction of its entries), what
 * the chain does with its packets, where it runs and with which tag, and the switch rules each entry became.
 * Immutable; text for people comes from {@code org.metron.app.rest.MetronText}.
 */
public final class TrafficClassInfo {
    /** What happens to the class's packets. */
    public enum Disposition {
        /** The chain drops them (at the switch, or in software when the switch cannot tell them apart). */
        DROP,
        /** Forwarded by the switch with its header writes; no server sees them. */
        SWITCH,
        /** Tagged toward the core of the class's group on the chain's server. */
        SERVER
    }

    /** Where an entry's packets are told apart from other classes'. */
    public enum Classification {
        /** The offload switch matches the entry with rules of its own and applies the class's action. */
        SWITCH,
        /**
         * The switch cannot hold the entry (or ran out of room): its packets go unclassified to the chain's
         * classifying group, whose software classifier applies the entries in first-match order.
         */
        SOFTWARE
    }

    /** One filter entry of the class, with the switch rules it became. */
    public static final class Entry {
        private final int index;
        private final String match;
        private final Classification classification;
        private final List<FlowRule> rules;

        /**
         * @param index          position among the class's entries (0 first)
         * @param match          the entry, IPClassifier pattern syntax
         * @param classification where its packets are told apart
         * @param rules          the switch rules installed for this entry (empty when none is installed: not
         *                       deployed, or left to software without a punt rule of its own)
         */
        public Entry(int index, String match, Classification classification, List<FlowRule> rules) {
            this.index = index;
            this.match = Objects.requireNonNull(match);
            this.classification = Objects.requireNonNull(classification);
            this.rules = ImmutableList.copyOf(rules);
        }

        public int index() {
            return index;
        }

        public String match() {
            return match;
        }

        public Classification classification() {
            return classification;
        }

        public List<FlowRule> rules() {
            return rules;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Entry)) {
                return false;
            }
            Entry e = (Entry) o;
            return e.index == index && e.match.equals(match) && e.classification == classification
                    && e.rules.equals(rules);
        }

        @Override
        public int hashCode() {
            return Objects.hash(index, match, classification, rules);
        }

        @Override
        public String toString() {
            return MoreObjects.toStringHelper(this).add("index", index).add("match", match)
                    .add("classification", classification).add("rules", rules.size()).toString();
        }
    }

    private final ChainId chainId;
    private final int classId;
    private final List<Entry> entries;
    private final Disposition disposition;
    private final String operations;
    private final String groupId;
    private final Tag tag;
    private final int core;
    private final DeviceId server;

    /**
     * @param entries     the class's filter entries in first-match order
     * @param disposition what happens to its packets
     * @param operations  what the chain does with them, NF by NF (the synthesizer's description)
     * @param groupId     group the class belongs to; empty when the class never reaches a server
     * @param tag         tag of that group; null when no server or not placed yet
     * @param core        core of that group; -1 when none
     * @param server      server running that group; null when none or not placed
     */
    public TrafficClassInfo(ChainId chainId, int classId, List<Entry> entries, Disposition disposition,
                            String operations, String groupId, Tag tag, int core, DeviceId server) {
        this.chainId = Objects.requireNonNull(chainId);
        this.classId = classId;
        this.entries = ImmutableList.copyOf(entries);
        this.disposition = Objects.requireNonNull(disposition);
        this.operations = Objects.requireNonNull(operations);
        this.groupId = groupId == null ? "" : groupId;
        this.tag = tag;
        this.core = core;
        this.server = server;
    }

    public ChainId chainId() {
        return chainId;
    }

    public int classId() {
        return classId;
    }

    /** Filter entries in first-match order. */
    public List<Entry> entries() {
        return entries;
    }

    public Disposition disposition() {
        return disposition;
    }

    /** What the chain does with the class's packets, NF by NF. */
    public String operations() {
        return operations;
    }

    public String groupId() {
        return groupId;
    }

    /** Tag of the class's group, or null. */
    public Tag tag() {
        return tag;
    }

    public int core() {
        return core;
    }

    /** Server running the class's group, when placed on one. */
    public Optional<DeviceId> server() {
        return Optional.ofNullable(server);
    }

    /** Whether the class's packets reach a server core (its group runs there, even if the chain drops them). */
    public boolean needsServer() {
        return !groupId.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TrafficClassInfo)) {
            return false;
        }
        TrafficClassInfo t = (TrafficClassInfo) o;
        return t.chainId.equals(chainId) && t.classId == classId && t.entries.equals(entries)
                && t.disposition == disposition && t.operations.equals(operations) && t.groupId.equals(groupId)
                && Objects.equals(t.tag, tag) && t.core == core && Objects.equals(t.server, server);
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, classId, entries, disposition, operations, groupId, tag, core, server);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("chain", chainId).add("class", classId).add("entries", entries)
                .add("disposition", disposition).add("group", groupId).add("tag", tag).add("core", core)
                .add("server", server).toString();
    }
}
