package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

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
