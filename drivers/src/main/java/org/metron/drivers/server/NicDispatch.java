package org.metron.drivers.server;

import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.DispatchRefusal;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicCapabilities;
import org.metron.agent.v1.TagType;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * How one agent NIC dispatches group tags to cores, as the agent reports it in {@code GetResources}: the mode it
 * runs, the mode asked on its command line, the modes its probe found possible, the tag types it can steer, what
 * its driver answered to the probe, and every mode refused with the reason. Mode names are the agent's command
 * line spelling ({@code rte-flow, vmdq, rss, single, fanout}); an empty requested mode means nothing was asked.
 */
public final class NicDispatch {

    /** A mode the agent tried (asked for, or better than the one chosen) and could not run, with why. */
    public static final class Refusal {
        private final String mode;
        private final String reason;

        public Refusal(String mode, String reason) {
            this.mode = Objects.requireNonNull(mode);
            this.reason = Objects.requireNonNull(reason);
        }

        public String mode() {
            return mode;
        }

        public String reason() {
            return reason;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Refusal && mode.equals(((Refusal) o).mode) && reason.equals(((Refusal) o).reason);
        }

        @Override
        public int hashCode() {
            return Objects.hash(mode, reason);
        }
    }

    private final String active;
    private final String requested;
    private final boolean automatic;
    private final List<String> possible;
    private final List<String> tagTypes;
    private final List<Refusal> refusals;
    private final NicCapabilities capabilities;

    private NicDispatch(Nic n) {
        this.active = name(n.getActiveMode());
        this.requested = n.getRequestedMode() == DispatchMode.DISPATCH_MODE_UNSPECIFIED ? ""
                : name(n.getRequestedMode());
        this.automatic = n.getAutoMode();
        this.possible = n.getDispatchModesList().stream().map(NicDispatch::name)
                .collect(Collectors.toUnmodifiableList());
        this.tagTypes = n.getTagTypesList().stream().filter(t -> t != TagType.TAG_TYPE_UNSPECIFIED
                && t != TagType.UNRECOGNIZED).map(t -> t.name().substring("TAG_".length()).toLowerCase())
                .collect(Collectors.toUnmodifiableList());
        this.refusals = n.getRefusalsList().stream().map(r -> new Refusal(name(r.getMode()), r.getReason()))
                .collect(Collectors.toUnmodifiableList());
        this.capabilities = n.hasCapabilities() ? n.getCapabilities() : null;
    }

    /** The dispatch part of an agent's NIC report. */
    public static NicDispatch of(Nic nic) {
        return new NicDispatch(nic);
    }

    /** The command line's spelling of a mode. */
    public static String name(DispatchMode m) {
        switch (m) {
            case DISPATCH_RTE_FLOW:
                return "rte-flow";
            case DISPATCH_VMDQ:
                return "vmdq";
            case DISPATCH_RSS:
                return "rss";
            case DISPATCH_FANOUT_CBPF:
                return "fanout";
            case DISPATCH_SINGLE:
                return "single";
            default:
                return "unspecified";
        }
    }

    /** The mode the NIC runs. */
    public String active() {
        return active;
    }

    /** The mode asked on the agent's command line; empty when none was. */
    public String requested() {
        return requested;
    }

    /** Whether the agent was told to pick the best mode itself ({@code --dispatch PORT=auto}). */
    public boolean automatic() {
        return automatic;
    }

    /** The modes the agent's probe found the NIC able to run, best first. */
    public List<String> possible() {
        return possible;
    }

    /** Tag types the NIC dispatches in its active mode ("mac", "vlan"). */
    public List<String> tagTypes() {
        return tagTypes;
    }

    /** Whether group tags of this type reach their cores through this NIC. */
    public boolean dispatches(String tagType) {
        return tagTypes.contains(tagType.toLowerCase());
    }

    public List<Refusal> refusals() {
        return refusals;
    }

    /** Whether the agent probed the NIC (DPDK ports; kernel interfaces in fanout mode are not). */
    public boolean probed() {
        return capabilities != null;
    }

    /** The driver's answers; the default instance when not {@link #probed()}. */
    public NicCapabilities capabilities() {
        return capabilities == null ? NicCapabilities.getDefaultInstance() : capabilities;
    }

    /**
     * The probe's rte_flow errors as plain strings: the app bundle reads them without seeing protobuf's list type
     * (ProtocolStringList), since protobuf stays inside this bundle (docs/onos.md).
     */
    public List<String> rteFlowErrors() {
        return List.copyOf(capabilities().getRteFlowErrorsList());
    }

    /** How the mode was chosen, for people: "rte-flow", "rss (auto)", "single (asked vmdq)". */
    public String summary() {
        if (automatic) {
            return active + " (auto)";
        }
        return requested.isEmpty() || requested.equals(active) ? active : active + " (asked " + requested + ")";
    }

    /**
     * The probed capabilities, for people: the driver, then each feature it has, e.g.
     * "net_tap: rte_flow queue, mark; rss (reta 0); 16 MACs"; "not probed" for a kernel interface.
     */
    public String capabilitySummary() {
        if (capabilities == null) {
            return "not probed";
        }
        NicCapabilities c = capabilities;
        List<String> parts = new ArrayList<>();
        if (c.getRteFlow()) {
            List<String> flow = new ArrayList<>();
            if (c.getRteFlowIsolate()) {
                flow.add("isolate");
            }
            if (c.getRteFlowQueue()) {
                flow.add("queue");
            }
            if (c.getRteFlowMark()) {
                flow.add("mark");
            }
            if (c.getRteFlowJump()) {
                flow.add("jump");
            }
            parts.add("rte_flow " + (flow.isEmpty() ? "(nothing validates)" : String.join(", ", flow)));
        } else {
            parts.add("no rte_flow");
        }
        parts.add(c.getVmdqPools() > 0 ? c.getVmdqPools() + " VMDq pools" : "no VMDq");
        parts.add(c.getRssOffloads() != 0 ? "rss (reta " + c.getRetaSize() + ")" : "no rss");
        parts.add(c.getMaxMacAddrs() + (c.getMaxMacAddrs() == 1 ? " MAC" : " MACs"));
        parts.add(c.getVlanFilter() ? "vlan filter" : "no vlan filter");
        return c.getDriver() + ": " + String.join("; ", parts);
    }

    /** The refusals, for people: "vmdq: port x has no VMDq ...; rss: ..."; empty when none. */
    public String refusalSummary() {
        return refusals.stream().map(r -> r.mode() + ": " + r.reason()).collect(Collectors.joining("; "));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof NicDispatch)) {
            return false;
        }
        NicDispatch d = (NicDispatch) o;
        return active.equals(d.active) && requested.equals(d.requested) && automatic == d.automatic
                && possible.equals(d.possible) && tagTypes.equals(d.tagTypes) && refusals.equals(d.refusals)
                && Objects.equals(capabilities, d.capabilities);
    }

    @Override
    public int hashCode() {
        return Objects.hash(active, requested, automatic, possible, tagTypes, refusals, capabilities);
    }

    @Override
    public String toString() {
        return "NicDispatch{active=" + active + ", requested=" + requested + ", auto=" + automatic + ", possible="
                + possible + ", tagTypes=" + tagTypes + ", refusals=" + refusals.size() + "}";
    }
}
