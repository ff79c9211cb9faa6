package org.metron.app.impl;


import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.spi.NetworkDevice;
import org.metron.app.store.ChainStore;
import org.metron.synth.CompiledChain;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * The check that a chain's entry points are free for it: where chains share an ingress (or reply ingress) point,
 * their traffic there must be disjoint ({@link SharedIngress}). Bring-up and make-before-break updates run it while
 * they hold the reservation lock, so two chains cannot both claim the same traffic.
 */
final class SharedIngressCheck {
    private final ChainStore store;
    private final PlacementEngine placement;
    private final ChainCompilers compilers;

    SharedIngressCheck(ChainStore store, PlacementEngine placement, ChainCompilers compilers) {
        this.store = Objects.requireNonNull(store);
        this.placement = Objects.requireNonNull(placement);
        this.compilers = Objects.requireNonNull(compilers);
    }

    /**
     * Offload rules of a chain match what arrives on its ingress point, and reply rules what arrives on its egress
     * point when it has a reply ingress: a chain may use a point another chain uses only when their traffic there
     * is disjoint ({@link SharedIngress}); else it is refused, naming both chains and a packet of the overlap.
     */
    void require(ChainId id, Deployment d, String json, OffloadChoice oc) {
        require(id, d, json, oc.device(), oc.compiled());
    }

    /**
     * {@link #require} before a server is chosen, as the ingress device would classify the chain (where
     * chains share a point they classify it there): an overlap is reported as such, not as a lack of cores.
     */
    void requireEarly(ChainId id, Deployment d, String json, ChainCompiler compiler) {
        DeviceId at = ingress(d).deviceId();
        Optional<NetworkDevice> device = placement.network().device(at);
        if (device.isPresent() && device.get().role().programmable()) {
            require(id, d, json, at, compiler.apply(PlacementEngine.profileFor(device.get().role())));
        }
    }

    private void require(ChainId id, Deployment d, String json, DeviceId offload, CompiledChain cc) {
        List<ConnectPoint> mine = ReplyTraffic.entryPoints(d, json);
        for (Chain other : store.chains().snapshot().values()) {
            if (other.id().equals(id) || !other.state().holdsResources()) {
                continue;
            }
            List<ConnectPoint> theirs = ReplyTraffic.entryPoints(other.deployment(), other.json());
            for (ConnectPoint p : mine) {
                if (!theirs.contains(p)) {
                    continue;
                }
                Optional<Placement> op = store.placements().get(other.id()).map(Versioned::value);
                if (op.isEmpty() || op.get().offloadDevice().isEmpty()) {
                    throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "entry point " + p + " already carries "
                            + "chain " + other.id() + ", which is not placed yet; retry once it is");
                }
                SharedIngress.require(entryAt(id, p, d, offload, cc),
                        entryAt(other.id(), p, other.deployment(), op.get().offloadDevice().get(),
                                compilers.compiled(other, op)));
            }
        }
    }

    private static SharedIngress.Entry entryAt(ChainId id, ConnectPoint p, Deployment d, DeviceId offload,
                                               CompiledChain cc) {
        boolean replies = !p.equals(ingress(d));
        return SharedIngress.Entry.of(id, p, replies ? egress(d).deviceId() : offload, cc, replies);
    }
}
