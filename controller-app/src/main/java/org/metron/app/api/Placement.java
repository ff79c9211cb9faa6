package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Where a chain runs: the server and its NIC, one core and tag per traffic-class group, and the offload device
 * (the first programmable device on the ingress→server path that fits). A chain whose every class the offload
 * device can handle alone (a stateless chain, fully offloaded) has no server, no NICs and no groups.
 */
public final class Placement {
    private final ChainId chainId;
    private final DeviceId server;
    private final String nic;
    private final String egressNic;
    private final DeviceId offloadDevice;
    private final String offloadProfile;
    private final List<GroupAssignment> groups;

    /**
     * @param offloadProfile name of the synthesizer target profile the offload rules were built for
     *                       ({@code TargetProfile.named} reads it back)
     */
    public Placement(ChainId chainId, Optional<DeviceId> server, String nic, String egressNic,
                     Optional<DeviceId> offloadDevice,
                     String offloadProfile, List<GroupAssignment> groups) {
        this.chainId = Objects.requireNonNull(chainId, "chainId");
        this.server = server.orElse(null);
        this.nic = Objects.requireNonNull(nic, "nic");
        this.egressNic = Objects.requireNonNull(egressNic, "egressNic");
        this.offloadDevice = offloadDevice.orElse(null);
        this.offloadProfile = Objects.requireNonNull(offloadProfile, "offloadProfile");
        this.groups = ImmutableList.copyOf(groups);
        Map<Integer, String> shares = new HashMap<>();
        for (GroupAssignment g : this.groups) {
            String other = g.portShare() == GroupAssignment.NO_PORT_SHARE ? null
                    : shares.putIfAbsent(g.portShare(), g.groupId());
            if (other != null) {
                throw new IllegalArgumentException("chain " + chainId + ": groups " + other + " and " + g.groupId()
                        + " both hold port share " + g.portShare());
            }
        }
    }

    /**
     * The lowest port share (docs/scaling.md#port-shares) no group of this placement holds, on any server, nor
     * {@code alsoTaken}.
     *
     * @throws IllegalStateException when all {@link GroupAssignment#PORT_SHARES} are held
     */
    public int freePortShare(Collection<Integer> alsoTaken) {
        Set<Integer> held = groups.stream().map(GroupAssignment::portShare).collect(Collectors.toSet());
        for (int s = 0; s < GroupAssignment.PORT_SHARES; s++) {
            if (!held.contains(s) && !alsoTaken.contains(s)) {
                return s;
            }
        }
        throw new IllegalStateException("chain " + chainId + " holds all " + GroupAssignment.PORT_SHARES
                + " port shares (groups " + groups.stream().map(GroupAssignment::groupId)
                .collect(Collectors.toList()) + ")");
    }

    /** {@code groups} with port shares 0, 1, ... in order, skipping {@code taken} (a version running beside). */
    public static List<GroupAssignment> withPortShares(List<GroupAssignment> groups, Collection<Integer> taken) {
        ImmutableList.Builder<GroupAssignment> out = ImmutableList.builder();
        int s = 0;
        for (GroupAssignment g : groups) {
            while (taken.contains(s)) {
                s++;
            }
            if (s >= GroupAssignment.PORT_SHARES) {
                throw new IllegalStateException(groups.size() + " groups beside port shares " + taken
                        + " need more than the " + GroupAssignment.PORT_SHARES + " port shares");
            }
            out.add(g.withPortShare(s++));
        }
        return out.build();
    }

    /** The port shares its groups hold. */
    public Set<Integer> portShares() {
        return groups.stream().map(GroupAssignment::portShare).filter(s -> s != GroupAssignment.NO_PORT_SHARE)
                .collect(Collectors.toSet());
    }

    public ChainId chainId() {
        return chainId;
    }

    /** The server running the chain's stateful part; empty for a fully offloaded chain. */
    public Optional<DeviceId> server() {
        return Optional.ofNullable(server);
    }

    /** Agent-local name of the NIC (empty without a server) the chain's traffic arrives on. */
    public String nic() {
        return nic;
    }

    /** NIC the chain's output leaves through (the same as {@link #nic()} when the chain asked for one NIC). */
    public String egressNic() {
        return egressNic;
    }

    public Optional<DeviceId> offloadDevice() {
        return Optional.ofNullable(offloadDevice);
    }

    public String offloadProfile() {
        return offloadProfile;
    }

    public List<GroupAssignment> groups() {
        return groups;
    }

    /** The group with this id, if the chain has one. */
    public Optional<GroupAssignment> group(String groupId) {
        return groups.stream().filter(g -> g.groupId().equals(groupId)).findFirst();
    }

    /** Cores the chain holds on its server (groups scaled out to other servers are not counted). */
    public List<Integer> cores() {
        return groups.stream().filter(g -> !g.remote()).map(GroupAssignment::core).distinct()
                .collect(ImmutableList.toImmutableList());
    }

    /** The groups running on the chain's server. */
    public List<GroupAssignment> localGroups() {
        return groups.stream().filter(g -> !g.remote()).collect(ImmutableList.toImmutableList());
    }

    /** Cores the chain holds on {@code device}: its own server's, or those of groups scaled out to it. */
    public List<Integer> coresOn(DeviceId device) {
        return groups.stream().filter(g -> g.server().map(device::equals).orElse(device.equals(server)))
                .map(GroupAssignment::core).distinct().collect(ImmutableList.toImmutableList());
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Placement)) {
            return false;
        }
        Placement p = (Placement) o;
        return chainId.equals(p.chainId) && Objects.equals(server, p.server) && nic.equals(p.nic) && egressNic.equals(p.egressNic)
                && Objects.equals(offloadDevice, p.offloadDevice) && offloadProfile.equals(p.offloadProfile) && groups.equals(p.groups);
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, server, nic, egressNic, offloadDevice, offloadProfile, groups);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("chain", chainId).add("server", server).add("nic", nic).add("egressNic", egressNic)
                .add("offload", offloadDevice).add("profile", offloadProfile).add("groups", groups).toString();
    }
}
