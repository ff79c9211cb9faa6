package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a chain runs: the server and its NIC, one core and tag per traffic-class group, and the offload device
 * (the first programmable device on the ingress→server path that fits; absent = the server classifies all).
 */
public final class Placement {
    private final ChainId chainId;
    private final DeviceId server;
    private final String nic;
    private final DeviceId offloadDevice;
    private final List<GroupAssignment> groups;

    public Placement(ChainId chainId, DeviceId server, String nic, Optional<DeviceId> offloadDevice,
                     List<GroupAssignment> groups) {
        this.chainId = Objects.requireNonNull(chainId, "chainId");
        this.server = Objects.requireNonNull(server, "server");
        this.nic = Objects.requireNonNull(nic, "nic");
        this.offloadDevice = offloadDevice.orElse(null);
        this.groups = ImmutableList.copyOf(groups);
    }

    public ChainId chainId() {
        return chainId;
    }

    public DeviceId server() {
        return server;
    }

    /** Agent-local name of the NIC the chain's traffic arrives on. */
    public String nic() {
        return nic;
    }

    public Optional<DeviceId> offloadDevice() {
        return Optional.ofNullable(offloadDevice);
    }

    public List<GroupAssignment> groups() {
        return groups;
    }

    /** Cores the chain holds on the server. */
    public List<Integer> cores() {
        return groups.stream().map(GroupAssignment::core).distinct().collect(ImmutableList.toImmutableList());
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Placement)) {
            return false;
        }
        Placement p = (Placement) o;
        return chainId.equals(p.chainId) && server.equals(p.server) && nic.equals(p.nic)
                && Objects.equals(offloadDevice, p.offloadDevice) && groups.equals(p.groups);
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, server, nic, offloadDevice, groups);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("chain", chainId).add("server", server).add("nic", nic)
                .add("offload", offloadDevice).add("groups", groups).toString();
    }
}
