package org.metron.app.api;

import org.onosproject.net.DeviceId;

import java.util.Objects;

/**
 * A group tag held on one server NIC by one group of one chain. A fully offloaded chain (no server) holds one
 * tag as its egress marker: then {@code server} is the offload device, {@code nic} is empty and the group id
 * is {@value #EGRESS_GROUP}.
 */
public final class TagAllocation {
    /** Group id of the egress-marker tag of a chain without server groups. */
    public static final String EGRESS_GROUP = "egress";
    private final DeviceId server;
    private final String nic;
    private final Tag tag;
    private final ChainId chainId;
    private final String groupId;

    public TagAllocation(DeviceId server, String nic, Tag tag, ChainId chainId, String groupId) {
        this.server = Objects.requireNonNull(server);
        this.nic = Objects.requireNonNull(nic);
        this.tag = Objects.requireNonNull(tag);
        this.chainId = Objects.requireNonNull(chainId);
        this.groupId = Objects.requireNonNull(groupId);
    }

    public DeviceId server() {
        return server;
    }

    public String nic() {
        return nic;
    }

    public Tag tag() {
        return tag;
    }

    public ChainId chainId() {
        return chainId;
    }

    public String groupId() {
        return groupId;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TagAllocation)) {
            return false;
        }
        TagAllocation t = (TagAllocation) o;
        return server.equals(t.server) && nic.equals(t.nic) && tag.equals(t.tag) && chainId.equals(t.chainId)
                && groupId.equals(t.groupId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(server, nic, tag, chainId, groupId);
    }

    @Override
    public String toString() {
        return server + "/" + nic + " " + tag + " -> " + chainId + "/" + groupId;
    }
}
