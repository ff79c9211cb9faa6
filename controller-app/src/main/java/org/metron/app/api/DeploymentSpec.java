package org.metron.app.api;

import com.google.common.base.MoreObjects;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;

import java.util.Objects;
import java.util.Optional;

/**
 * The {@code deployment} object of a chain (docs/contracts.md#chain-json): what the controller needs to place
 * the chain. Immutable; built by {@code ChainRequests} which validates every field.
 */
public final class DeploymentSpec {
    private final TagType tagType;
    private final int cpuCores;
    private final int maxCpuCores;
    private final boolean autoScale;
    private final ConnectPoint ingressPoint;
    private final ConnectPoint egressPoint;
    private final int nics;
    private final MacAddress egressMac;
    private final MacAddress replyMac;

    /** A deployment that names no next-hop MAC: the controller looks for the hosts at the points. */
    public DeploymentSpec(TagType tagType, int cpuCores, int maxCpuCores, boolean autoScale,
                          ConnectPoint ingressPoint, ConnectPoint egressPoint, int nics) {
        this(tagType, cpuCores, maxCpuCores, autoScale, ingressPoint, egressPoint, nics, null, null);
    }

    /**
     * A deployment; {@code egressMac} and {@code replyMac} may be null (docs/contracts.md#egress).
     *
     * @param egressMac the next hop behind the egress point: forward output leaves addressed to it
     * @param replyMac  the next hop behind the ingress point: replies leave addressed to it
     */
    public DeploymentSpec(TagType tagType, int cpuCores, int maxCpuCores, boolean autoScale,
                          ConnectPoint ingressPoint, ConnectPoint egressPoint, int nics, MacAddress egressMac,
                          MacAddress replyMac) {
        this.tagType = Objects.requireNonNull(tagType, "tagType");
        this.ingressPoint = Objects.requireNonNull(ingressPoint, "ingressPoint");
        this.egressPoint = Objects.requireNonNull(egressPoint, "egressPoint");
        if (cpuCores < 1 || maxCpuCores < cpuCores || nics < 1) {
            throw new IllegalArgumentException("need 1 <= cpuCores (" + cpuCores + ") <= maxCpuCores ("
                    + maxCpuCores + ") and nics (" + nics + ") >= 1");
        }
        this.cpuCores = cpuCores;
        this.maxCpuCores = maxCpuCores;
        this.autoScale = autoScale;
        this.nics = nics;
        this.egressMac = egressMac;
        this.replyMac = replyMac;
    }

    public TagType tagType() {
        return tagType;
    }

    /** Cores reserved at placement. */
    public int cpuCores() {
        return cpuCores;
    }

    /** Upper bound for scaling out. */
    public int maxCpuCores() {
        return maxCpuCores;
    }

    public boolean autoScale() {
        return autoScale;
    }

    /** Where the chain's traffic enters the network. */
    public ConnectPoint ingressPoint() {
        return ingressPoint;
    }

    /** Where the chain's traffic leaves the network. */
    public ConnectPoint egressPoint() {
        return egressPoint;
    }

    /** NICs the server must offer (with link up). */
    public int nics() {
        return nics;
    }

    /** The operator's MAC for the next hop behind the egress point; empty when the chain names none. */
    public Optional<MacAddress> egressMac() {
        return Optional.ofNullable(egressMac);
    }

    /** The operator's MAC for the next hop behind the ingress point (replies); empty when the chain names none. */
    public Optional<MacAddress> replyMac() {
        return Optional.ofNullable(replyMac);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DeploymentSpec)) {
            return false;
        }
        DeploymentSpec d = (DeploymentSpec) o;
        return tagType == d.tagType && cpuCores == d.cpuCores && maxCpuCores == d.maxCpuCores
                && autoScale == d.autoScale && nics == d.nics && ingressPoint.equals(d.ingressPoint)
                && egressPoint.equals(d.egressPoint) && Objects.equals(egressMac, d.egressMac)
                && Objects.equals(replyMac, d.replyMac);
    }

    @Override
    public int hashCode() {
        return Objects.hash(tagType, cpuCores, maxCpuCores, autoScale, ingressPoint, egressPoint, nics, egressMac,
                replyMac);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("tagType", tagType).add("cpuCores", cpuCores)
                .add("maxCpuCores", maxCpuCores).add("autoScale", autoScale).add("ingress", ingressPoint)
                .add("egress", egressPoint).add("nics", nics).add("egressMac", egressMac).add("replyMac", replyMac)
                .omitNullValues().toString();
    }
}
