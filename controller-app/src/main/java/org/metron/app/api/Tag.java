package org.metron.app.api;

import org.metron.synth.TagType;

import org.onlab.packet.MacAddress;

import java.util.Objects;

/**
 * A traffic-class group's tag on one server NIC. The single place that turns a group tag and a class index
 * into the header values of docs/contracts.md#tags.
 */
public final class Tag {
    /** Locally administered unicast prefix of every Metron tag MAC. */
    public static final int MAC_PREFIX = 0x024d;
    /** Class index of packets the offload device could not classify (the synthesizer's UNCLASSIFIED). */
    public static final int UNCLASSIFIED_CLASS = 0xFFFF;
    /**
     * Class index reserved for a chain's egress marker (02:4d:GG:GG:ff:fe): the agent writes it on packets
     * leaving toward the chain's egress point, return-path rules forward on it. Never a traffic class.
     */
    public static final int EGRESS_CLASS = 0xFFFE;
    /** Class index of reply packets the reply device could not classify (the synthesizer's REPLY_UNCLASSIFIED). */
    public static final int REPLY_UNCLASSIFIED_CLASS = 0xFFFD;
    /**
     * Class index reserved for a chain's reply egress marker (02:4d:GG:GG:ff:fc): the agent writes it on replies
     * leaving toward the chain's ingress point (the source side), reply return-path rules forward on it. Never a
     * traffic class.
     */
    public static final int REPLY_EGRESS_CLASS = 0xFFFC;
    /** Mask a NIC uses to dispatch on the group bits only. */
    public static final MacAddress GROUP_MASK = MacAddress.valueOf("ff:ff:ff:ff:00:00");

    private final TagType type;
    private final int group;

    private Tag(TagType type, int group) {
        this.type = type;
        this.group = group;
    }

    /**
     * Returns a tag.
     *
     * @param type  MAC or VLAN
     * @param group group tag within the type's range
     * @return tag
     * @throws IllegalArgumentException naming the value and the range when out of range
     */
    public static Tag of(TagType type, int group) {
        Objects.requireNonNull(type, "tag type");
        if (group < type.min() || group > type.max()) {
            throw new IllegalArgumentException(type + " group tag " + group + " outside "
                    + type.min() + ".." + type.max());
        }
        return new Tag(type, group);
    }

    public TagType type() {
        return type;
    }

    /** Group tag: MAC GGGG or VLAN id. */
    public int group() {
        return group;
    }

    /**
     * dst MAC the offload device writes for one class of this group.
     *
     * @param classIndex traffic class index in the chain, 0..65531, {@link #REPLY_UNCLASSIFIED_CLASS} or
     *                   {@link #UNCLASSIFIED_CLASS}
     * @return 02:4d:GG:GG:CC:CC (MAC) or 02:4d:00:00:CC:CC (VLAN)
     */
    public MacAddress classMac(int classIndex) {
        if (classIndex < 0 || classIndex > UNCLASSIFIED_CLASS || classIndex == EGRESS_CLASS
                || classIndex == REPLY_EGRESS_CLASS) {
            throw new IllegalArgumentException("class index " + classIndex + " outside 0.." + (REPLY_EGRESS_CLASS - 1)
                    + " and not " + REPLY_UNCLASSIFIED_CLASS + " or " + UNCLASSIFIED_CLASS);
        }
        return mac(classIndex);
    }

    /** dst MAC the agent writes on packets of this group leaving toward the chain's egress. */
    public MacAddress egressMac() {
        return mac(EGRESS_CLASS);
    }

    /** dst MAC the agent writes on replies of this group leaving toward the chain's ingress point. */
    public MacAddress replyEgressMac() {
        return mac(REPLY_EGRESS_CLASS);
    }

    /** dst MAC whose group bits (under {@link #GROUP_MASK}) identify this group. */
    public MacAddress groupMac() {
        return mac(0);
    }

    private MacAddress mac(int classIndex) {
        long g = type == TagType.MAC ? group : 0;
        long v = ((long) MAC_PREFIX << 32) | (g << 16) | classIndex;
        return MacAddress.valueOf(v);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Tag && ((Tag) o).type == type && ((Tag) o).group == group;
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, group);
    }

    @Override
    public String toString() {
        return type == TagType.MAC ? "mac:" + groupMac() + "/ff:ff:ff:ff:00:00" : "vlan:" + group;
    }
}
