package org.metron.drivers.server;

import org.metron.agent.v1.Core;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.PortStats;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.TagType;
import org.onlab.packet.ChassisId;
import org.onosproject.net.DefaultAnnotations;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DefaultPortDescription;
import org.onosproject.net.device.DefaultPortStatistics;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.device.PortStatistics;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Agent messages → ONOS descriptions. Pure functions; the behaviours only fetch and call these.
 * Annotation keys are the contract with the controller app's server view.
 */
public final class ServerDescriptions {

    public static final String MANUFACTURER = "Metron";

    /** Device annotations. */
    public static final String CORES = "cores";
    public static final String AVAILABLE_CORES = "availableCores";
    public static final String CPU_HZ = "cpuHz";
    public static final String MEMORY_BYTES = "memoryBytes";
    public static final String TAGS_IN_USE = "tagsInUse";

    /** Port annotations. */
    public static final String MAC = "mac";
    public static final String RX_QUEUES = "rxQueues";
    public static final String TX_QUEUES = "txQueues";
    public static final String DISPATCH_MODES = "dispatchModes";
    public static final String ACTIVE_DISPATCH = "activeDispatch";
    public static final String TAG_TYPES = "tagTypes";
    /** How the mode was chosen ({@link NicDispatch#summary()}), the probe's answers, the modes refused. */
    public static final String DISPATCH = "dispatch";
    public static final String DISPATCH_CAPABILITIES = "dispatchCapabilities";
    public static final String DISPATCH_REFUSALS = "dispatchRefusals";
    public static final String MAX_NIC_RULES = "maxNicRules";
    public static final String NUMA_NODE = "numaNode";

    private ServerDescriptions() {
    }

    public static DeviceDescription device(DeviceId id, ServerResources r) {
        int available = freeCores(r).size();
        DefaultAnnotations annotations = DefaultAnnotations.builder()
                .set(CORES, Integer.toString(r.getCoresCount()))
                .set(AVAILABLE_CORES, Integer.toString(available))
                .set(CPU_HZ, Long.toUnsignedString(r.getCpuHz()))
                .set(MEMORY_BYTES, Long.toUnsignedString(r.getMemoryBytes()))
                .set(TAGS_IN_USE, r.getTagsInUseList().stream().map(String::valueOf)
                        .collect(Collectors.joining(",")))
                .build();
        return new DefaultDeviceDescription(id.uri(), Device.Type.SERVER, MANUFACTURER, r.getCpuModel(),
                                            r.getAgentVersion(), r.getHostname(),
                                            new ChassisId(chassis(r.getHostname())), true, annotations);
    }

    /** A stable, non-negative chassis id from the host name. */
    private static long chassis(String hostname) {
        return hostname.hashCode() & 0x7fffffffL;
    }

    public static List<PortDescription> ports(ServerResources r) {
        NicPorts numbering = NicPorts.of(r);
        List<PortDescription> ports = new ArrayList<>(r.getNicsCount());
        for (Nic nic : r.getNicsList()) {
            NicDispatch dispatch = NicDispatch.of(nic);
            DefaultAnnotations a = DefaultAnnotations.builder()
                    .set(MAC, nic.getMac())
                    .set(RX_QUEUES, Integer.toString(nic.getRxQueues()))
                    .set(TX_QUEUES, Integer.toString(nic.getTxQueues()))
                    .set(DISPATCH_MODES, nic.getDispatchModesList().stream().map(DispatchMode::name)
                            .collect(Collectors.joining(",")))
                    .set(ACTIVE_DISPATCH, nic.getActiveMode().name())
                    .set(TAG_TYPES, nic.getTagTypesList().stream().map(TagType::name)
                            .collect(Collectors.joining(",")))
                    .set(DISPATCH, dispatch.summary())
                    .set(DISPATCH_CAPABILITIES, dispatch.capabilitySummary())
                    .set(DISPATCH_REFUSALS, dispatch.refusalSummary())
                    .set(MAX_NIC_RULES, Integer.toString(nic.getMaxNicRules()))
                    .set(NUMA_NODE, Integer.toString(nic.getNumaNode()))
                    .set(org.onosproject.net.AnnotationKeys.PORT_NAME, nic.getName())
                    .set(org.onosproject.net.AnnotationKeys.PORT_MAC, nic.getMac())
                    .build();
            ports.add(DefaultPortDescription.builder()
                              .withPortNumber(numbering.port(nic.getName()).orElseThrow())
                              .isEnabled(nic.getLinkUp())
                              .type(Port.Type.COPPER)
                              .portSpeed(nic.getSpeedMbps())
                              .annotations(a)
                              .build());
        }
        return ports;
    }

    /** Port counters of the NICs the server still has (stats of a NIC unknown to {@code numbering} are skipped). */
    public static List<PortStatistics> portStatistics(DeviceId id, NicPorts numbering, Stats stats) {
        List<PortStatistics> out = new ArrayList<>(stats.getPortsCount());
        for (PortStats p : stats.getPortsList()) {
            Optional<PortNumber> port = numbering.port(p.getNic());
            port.ifPresent(n -> out.add(DefaultPortStatistics.builder()
                    .setDeviceId(id)
                    .setPort(n)
                    .setPacketsReceived(p.getRxPackets())
                    .setBytesReceived(p.getRxBytes())
                    .setPacketsSent(p.getTxPackets())
                    .setBytesSent(p.getTxBytes())
                    .setPacketsRxDropped(p.getRxDropped())
                    .setPacketsTxDropped(p.getTxDropped())
                    .build()));
        }
        return out;
    }

    /** Cores a pipeline may still be given. */
    public static List<Integer> freeCores(ServerResources r) {
        return r.getCoresList().stream().filter(c -> c.getAvailable() && c.getPipelineId().isEmpty())
                .map(Core::getId).map(Integer::valueOf).collect(Collectors.toList());
    }
}
