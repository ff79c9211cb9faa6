package org.metron.app.impl;

import org.metron.app.api.Deployments;

import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.spi.NetworkView;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;

import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * The destination MACs a chain's frames get at their last hop (docs/contracts.md#egress): inside the network
 * they carry the chain's marker, which the return rules forward on; the host receiving them accepts only its
 * own address. For each end: the MAC the operator named in the chain, else the one host the network knows at
 * that point, else none (the marker stays, as it did before chains could say). Immutable.
 */
final class NextHops {
    private final MacAddress egress;
    private final MacAddress reply;

    private NextHops(MacAddress egress, MacAddress reply) {
        this.egress = egress;
        this.reply = reply;
    }

    /**
     * Resolves a chain's next hops from its deployment and the hosts the network knows.
     *
     * @param replies whether the chain has a reply ingress (only then are replies delivered at the ingress point)
     * @throws MetronException IMPOSSIBLE_PLACEMENT when the chain names no MAC and several hosts share a point
     */
    static NextHops of(ChainId chain, Deployment d, boolean replies, NetworkView network) {
        return new NextHops(resolve(chain, egress(d), Deployments.egressMac(d), "egressPoint",
                "egressMac", network), replies ? resolve(chain, ingress(d), Deployments.replyMac(d),
                "ingressPoint", "replyMac", network) : null);
    }

    private static MacAddress resolve(ChainId chain, ConnectPoint point, Optional<MacAddress> named,
                                      String pointField, String macField, NetworkView network) {
        if (named.isPresent()) {
            return named.get();
        }
        Set<MacAddress> known = network.hostMacs(point);
        if (known.size() > 1) {
            Set<String> sorted = new TreeSet<>();
            known.forEach(m -> sorted.add(m.toString().toLowerCase()));
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": hosts " + sorted
                    + " are all attached at its " + pointField + " " + point + "; name the one its traffic is for "
                    + "in deployment." + macField);
        }
        return known.isEmpty() ? null : known.iterator().next();
    }

    /** The MAC frames toward the egress point ({@code reply} false) or the ingress point get at their last hop. */
    Optional<MacAddress> toward(boolean reply) {
        return Optional.ofNullable(reply ? this.reply : egress);
    }
}
