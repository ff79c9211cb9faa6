package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One traffic-class group of a placed chain: its tag on the server NIC, the core that runs it, its classes, its
 * share of the NAPT port ranges, and — for a group scaling placed on another server than the chain's
 * (docs/scaling.md#scale-out) — that server and its NICs.
 */
public final class GroupAssignment {
    /**
     * Shares the port range of every rewriter pattern is divided into (docs/scaling.md#port-shares): a chain runs
     * at most this many groups at once, each mapping new flows to ports of its own share only.
     */
    public static final int PORT_SHARES = 16;
    /** {@link #portShare()} of a group placed before shares were assigned: the agent's per-core ranges. */
    public static final int NO_PORT_SHARE = -1;

    private final String groupId;
    private final Tag tag;
    private final int core;
    private final List<Integer> classIds;
    private final Map<Integer, ClassSlice> slices;
    private final DeviceId server;
    private final String nic;
    private final String egressNic;
    private final int portShare;

    public GroupAssignment(String groupId, Tag tag, int core, List<Integer> classIds) {
        this(groupId, tag, core, classIds, Map.of());
    }

    /**
     * @param slices the classes of {@code classIds} this group holds only a slice of (a class divided between
     *               groups by source-port bits, docs/scaling.md#class-split); the others it holds whole
     * @throws IllegalArgumentException for a slice of a class not in {@code classIds}
     */
    public GroupAssignment(String groupId, Tag tag, int core, List<Integer> classIds, Map<Integer, ClassSlice> slices) {
        this(groupId, tag, core, classIds, slices, null, "", "", NO_PORT_SHARE);
    }

    private GroupAssignment(String groupId, Tag tag, int core, List<Integer> classIds, Map<Integer, ClassSlice> slices,
                            DeviceId server, String nic, String egressNic, int portShare) {
        if (portShare < NO_PORT_SHARE || portShare >= PORT_SHARES) {
            throw new IllegalArgumentException("group " + groupId + ": port share " + portShare + " is not in 0.."
                    + (PORT_SHARES - 1));
        }
        this.portShare = portShare;
        this.server = server;
        this.nic = Objects.requireNonNull(nic, "nic");
        this.egressNic = Objects.requireNonNull(egressNic, "egressNic");
        if (server != null && (nic.isEmpty() || egressNic.isEmpty())) {
            throw new IllegalArgumentException("group " + groupId + " on server " + server + " needs its NICs");
        }
        this.groupId = Objects.requireNonNull(groupId, "groupId");
        this.tag = Objects.requireNonNull(tag, "tag");
        this.core = core;
        this.classIds = ImmutableList.copyOf(classIds);
        TreeMap<Integer, ClassSlice> b = new TreeMap<>();
        slices.forEach((cls, s) -> {
            if (!this.classIds.contains(cls)) {
                throw new IllegalArgumentException("group " + groupId + ": slice " + s + " of class " + cls
                        + ", which is not among its classes " + classIds);
            }
            if (!s.isWhole()) {
                b.put(cls, s);
            }
        });
        this.slices = ImmutableMap.copyOf(b);
    }

    public String groupId() {
        return groupId;
    }

    public Tag tag() {
        return tag;
    }

    public int core() {
        return core;
    }

    public List<Integer> classIds() {
        return classIds;
    }

    /** The classes this group holds only a slice of, and their slices (absent = the whole class). */
    public Map<Integer, ClassSlice> slices() {
        return slices;
    }

    /**
     * This group on another server than its chain's (a scale-out, docs/scaling.md#scale-out), reading its traffic
     * from {@code nic} of that server and sending its output through {@code egressNic}.
     */
    public GroupAssignment onServer(DeviceId remote, String remoteNic, String remoteEgressNic) {
        return new GroupAssignment(groupId, tag, core, classIds, slices, Objects.requireNonNull(remote, "server"),
                remoteNic, remoteEgressNic, portShare);
    }

    /** This group as the pipeline of the server it runs on holds it: no other server named, same share. */
    public GroupAssignment onItsServer() {
        return new GroupAssignment(groupId, tag, core, classIds, slices, null, "", "", portShare);
    }

    /**
     * This group mapping new flows to share {@code share} (of {@link #PORT_SHARES}) of every port range: unique
     * among the chain's groups on every server, so no two groups hand out the same external port.
     */
    public GroupAssignment withPortShare(int share) {
        return new GroupAssignment(groupId, tag, core, classIds, slices, server, nic, egressNic, share);
    }

    /** Its share of the port ranges, {@link #NO_PORT_SHARE} when none was assigned. */
    public int portShare() {
        return portShare;
    }

    /** The server running this group when it is not the chain's server; empty on the chain's server. */
    public Optional<DeviceId> server() {
        return Optional.ofNullable(server);
    }

    /** Whether the group runs on another server than its chain's. */
    public boolean remote() {
        return server != null;
    }

    /** NIC of {@link #server()} the group reads ("" on the chain's server: the placement's NIC). */
    public String nic() {
        return nic;
    }

    /** NIC of {@link #server()} the group's output leaves through ("" on the chain's server). */
    public String egressNic() {
        return egressNic;
    }

    /** The part of class {@code cls} this group holds: {@link ClassSlice#WHOLE} unless sliced. */
    public ClassSlice slice(int cls) {
        return slices.getOrDefault(cls, ClassSlice.WHOLE);
    }

    /** Class ids with their slices, e.g. "0 sport&0x0001=0x0001, 2", for operators. */
    public String classesText() {
        StringBuilder sb = new StringBuilder();
        for (int c : classIds) {
            sb.append(sb.length() > 0 ? ", " : "").append(c);
            if (slices.containsKey(c)) {
                sb.append(' ').append(slices.get(c));
            }
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof GroupAssignment)) {
            return false;
        }
        GroupAssignment g = (GroupAssignment) o;
        return groupId.equals(g.groupId) && tag.equals(g.tag) && core == g.core && classIds.equals(g.classIds)
                && slices.equals(g.slices) && Objects.equals(server, g.server) && nic.equals(g.nic)
                && egressNic.equals(g.egressNic) && portShare == g.portShare;
    }

    @Override
    public int hashCode() {
        return Objects.hash(groupId, tag, core, classIds, slices, server, nic, portShare);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("group", groupId).add("tag", tag).add("core", core)
                .add("classes", classesText()).add("server", server).add("portShare", portShare).toString();
    }
}
