package org.metron.app.api;

import org.metron.synth.Deployment;
import org.metron.synth.TagType;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;

import java.util.Optional;

/**
 * The controller's reading of a chain's {@link Deployment} (the one deployment type, shared with the synthesizer,
 * which knows no ONOS types): its points and MACs as ONOS values. A deployment the controller keeps always names
 * both points, in ONOS's canonical text ({@code ChainRequests} checks them when it accepts a chain; {@link #of}
 * writes them so), so these never fail on a stored chain.
 */
public final class Deployments {
    private Deployments() {
    }

    /** A deployment that names no next-hop MAC: the controller looks for the hosts at the points. */
    public static Deployment of(TagType tagType, int cpuCores, int maxCpuCores, boolean autoScale,
                                ConnectPoint ingressPoint, ConnectPoint egressPoint, int nics) {
        return of(tagType, cpuCores, maxCpuCores, autoScale, ingressPoint, egressPoint, nics, null, null);
    }

    /**
     * A deployment with both points; {@code egressMac} and {@code replyMac} may be null (docs/contracts.md#egress).
     *
     * @throws org.metron.synth.SynthesisException unless 1 &le; cpuCores &le; maxCpuCores and nics &ge; 1 (the
     *                                            deployment's own invariants)
     */
    public static Deployment of(TagType tagType, int cpuCores, int maxCpuCores, boolean autoScale,
                                ConnectPoint ingressPoint, ConnectPoint egressPoint, int nics, MacAddress egressMac,
                                MacAddress replyMac) {
        return new Deployment(tagType, cpuCores, maxCpuCores, autoScale, ingressPoint.toString(),
                egressPoint.toString(), nics, egressMac == null ? null : egressMac.toString(),
                replyMac == null ? null : replyMac.toString());
    }

    /** Where the chain's traffic enters the network. */
    public static ConnectPoint ingress(Deployment d) {
        return ConnectPoint.deviceConnectPoint(d.ingressPoint().orElseThrow(() ->
                new IllegalStateException("deployment names no ingress point: " + d)));
    }

    /** Where the chain's traffic leaves the network. */
    public static ConnectPoint egress(Deployment d) {
        return ConnectPoint.deviceConnectPoint(d.egressPoint().orElseThrow(() ->
                new IllegalStateException("deployment names no egress point: " + d)));
    }

    /** The operator's MAC for the next hop behind the egress point; empty when the chain names none. */
    public static Optional<MacAddress> egressMac(Deployment d) {
        return d.egressMac().map(MacAddress::valueOf);
    }

    /** The operator's MAC for the next hop behind the ingress point (replies); empty when the chain names none. */
    public static Optional<MacAddress> replyMac(Deployment d) {
        return d.replyMac().map(MacAddress::valueOf);
    }
}
