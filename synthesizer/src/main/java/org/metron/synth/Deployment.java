package org.metron.synth;

import java.util.Objects;
import java.util.Optional;

/**
 * The {@code deployment} block of chain JSON: how a chain is placed (tag carrier, cores, NICs, where its traffic
 * enters and leaves, next-hop MACs). The one deployment type: the synthesizer parses it (the schema has one
 * owner) but never uses it; the controller keeps it with the chain and places the chain by it. Points and MACs
 * are kept as text (this library knows no ONOS types); the controller checks their syntax when it accepts a
 * chain and stores them in ONOS's canonical form. Immutable.
 */
public final class Deployment {
    /** Defaults used when chain JSON has no deployment block. */
    public static final Deployment DEFAULT = new Deployment(TagType.MAC, 1, 1, false, null, null, 1);

    private final TagType tagType;
    private final int cpuCores;
    private final int maxCpuCores;
    private final boolean autoScale;
    private final String ingressPoint;
    private final String egressPoint;
    private final int nics;
    private final String egressMac;
    private final String replyMac;

    /** A deployment block without next-hop MACs (docs/contracts.md#egress). */
    public Deployment(TagType tagType, int cpuCores, int maxCpuCores, boolean autoScale, String ingressPoint,
                      String egressPoint, int nics) {
        this(tagType, cpuCores, maxCpuCores, autoScale, ingressPoint, egressPoint, nics, null, null);
    }

    /**
     * Creates a deployment block.
     *
     * @param tagType      MAC or VLAN tags
     * @param cpuCores     cores at deployment, &ge; 1
     * @param maxCpuCores  upper bound for scaling, &ge; cpuCores
     * @param autoScale    whether the controller scales automatically
     * @param ingressPoint ONOS connect point where traffic enters (may be null)
     * @param egressPoint  ONOS connect point where traffic leaves (may be null)
     * @param nics         NICs the server needs, &ge; 1
     * @param egressMac    MAC of the next hop behind the egress point (may be null; the controller checks it)
     * @param replyMac     MAC of the next hop behind the ingress point, where replies leave (may be null)
     */
    public Deployment(TagType tagType, int cpuCores, int maxCpuCores, boolean autoScale, String ingressPoint,
                      String egressPoint, int nics, String egressMac, String replyMac) {
        this.tagType = Objects.requireNonNull(tagType, "tagType");
        if (cpuCores < 1 || maxCpuCores < cpuCores || nics < 1) {
            throw new SynthesisException("chain JSON: deployment needs cpuCores >= 1, maxCpuCores >= cpuCores, "
                    + "nics >= 1 (got cpuCores " + cpuCores + ", maxCpuCores " + maxCpuCores + ", nics " + nics + ")");
        }
        this.cpuCores = cpuCores;
        this.maxCpuCores = maxCpuCores;
        this.autoScale = autoScale;
        this.ingressPoint = ingressPoint;
        this.egressPoint = egressPoint;
        this.nics = nics;
        this.egressMac = egressMac;
        this.replyMac = replyMac;
    }

    public TagType tagType() {
        return tagType;
    }

    public int cpuCores() {
        return cpuCores;
    }

    public int maxCpuCores() {
        return maxCpuCores;
    }

    public boolean autoScale() {
        return autoScale;
    }

    /** ONOS connect point string, e.g. {@code of:0000000000000001/1}. */
    public Optional<String> ingressPoint() {
        return Optional.ofNullable(ingressPoint);
    }

    public Optional<String> egressPoint() {
        return Optional.ofNullable(egressPoint);
    }

    public int nics() {
        return nics;
    }

    /** MAC address text of the host (or router) the chain's forward output is delivered to. */
    public Optional<String> egressMac() {
        return Optional.ofNullable(egressMac);
    }

    /** MAC address text of the host (or router) at the ingress point that replies are delivered to. */
    public Optional<String> replyMac() {
        return Optional.ofNullable(replyMac);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Deployment)) {
            return false;
        }
        Deployment d = (Deployment) o;
        return tagType == d.tagType && cpuCores == d.cpuCores && maxCpuCores == d.maxCpuCores
                && autoScale == d.autoScale && Objects.equals(ingressPoint, d.ingressPoint)
                && Objects.equals(egressPoint, d.egressPoint) && nics == d.nics
                && Objects.equals(egressMac, d.egressMac) && Objects.equals(replyMac, d.replyMac);
    }

    @Override
    public int hashCode() {
        return Objects.hash(tagType, cpuCores, maxCpuCores, autoScale, ingressPoint, egressPoint, nics, egressMac,
                replyMac);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("Deployment{tagType=").append(tagType).append(", cpuCores=")
                .append(cpuCores).append(", maxCpuCores=").append(maxCpuCores).append(", autoScale=")
                .append(autoScale);
        if (ingressPoint != null) {
            b.append(", ingress=").append(ingressPoint);
        }
        if (egressPoint != null) {
            b.append(", egress=").append(egressPoint);
        }
        b.append(", nics=").append(nics);
        if (egressMac != null) {
            b.append(", egressMac=").append(egressMac);
        }
        if (replyMac != null) {
            b.append(", replyMac=").append(replyMac);
        }
        return b.append('}').toString();
    }
}
