package org.metron.drivers.server;

import org.junit.Test;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.DispatchRefusal;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicCapabilities;
import org.metron.agent.v1.PortStats;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.TagType;
import org.onosproject.net.AnnotationKeys;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.device.PortStatistics;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

public class ServerDescriptionsTest {

    private static final DeviceId DEV = DeviceId.deviceId("metron:127.0.0.1:50051");
    private static final ServerResources RES = ServerResources.newBuilder()
            .setHostname("srv1").setAgentVersion("1.0").setCpuModel("Xeon").setCpuHz(2_400_000_000L)
            .setMemoryBytes(1L << 34)
            .addCores(Core.newBuilder().setId(0).setAvailable(false))
            .addCores(Core.newBuilder().setId(1).setAvailable(true).setPipelineId("chain1"))
            .addCores(Core.newBuilder().setId(2).setAvailable(true))
            .addCores(Core.newBuilder().setId(3).setAvailable(true))
            .addNics(Nic.newBuilder().setName("net_null0").setMac("02:00:00:00:00:01").setSpeedMbps(10000)
                             .setRxQueues(4).setTxQueues(4).setLinkUp(true).setMaxNicRules(512)
                             .addDispatchModes(DispatchMode.DISPATCH_RTE_FLOW)
                             .addDispatchModes(DispatchMode.DISPATCH_RSS)
                             .setActiveMode(DispatchMode.DISPATCH_RTE_FLOW)
                             .addTagTypes(TagType.TAG_MAC).addTagTypes(TagType.TAG_VLAN))
            .addNics(Nic.newBuilder().setName("eth1").setLinkUp(false))
            .addTagsInUse(7).addTagsInUse(9)
            .build();

    @Test
    public void deviceDescribesServerAndFreeCores() {
        DeviceDescription d = ServerDescriptions.device(DEV, RES);
        assertEquals(Device.Type.SERVER, d.type());
        assertEquals(DEV.uri(), d.deviceUri());
        assertEquals("Xeon", d.hwVersion());
        assertEquals("1.0", d.swVersion());
        assertEquals("srv1", d.serialNumber());
        assertEquals("4", d.annotations().value(ServerDescriptions.CORES));
        assertEquals("2", d.annotations().value(ServerDescriptions.AVAILABLE_CORES));
        assertEquals("7,9", d.annotations().value(ServerDescriptions.TAGS_IN_USE));
        assertEquals(List.of(2, 3), ServerDescriptions.freeCores(RES));
    }

    @Test
    public void nicsBecomeNumberedNamedPorts() {
        List<PortDescription> ports = ServerDescriptions.ports(RES);
        assertEquals(2, ports.size());
        PortDescription p1 = ports.get(0);
        assertEquals(PortNumber.portNumber(1), p1.portNumber());
        assertEquals("net_null0", p1.portNumber().name());
        assertTrue(p1.isEnabled());
        assertEquals(10000, p1.portSpeed());
        assertEquals("DISPATCH_RTE_FLOW,DISPATCH_RSS", p1.annotations().value(ServerDescriptions.DISPATCH_MODES));
        assertEquals("TAG_MAC,TAG_VLAN", p1.annotations().value(ServerDescriptions.TAG_TYPES));
        assertEquals("512", p1.annotations().value(ServerDescriptions.MAX_NIC_RULES));
        assertEquals("net_null0", p1.annotations().value(AnnotationKeys.PORT_NAME));
        assertFalse(ports.get(1).isEnabled());
        assertEquals(PortNumber.portNumber(2), ports.get(1).portNumber());
    }

    /** What a net_ring port asked for VMDq with --dispatch-fallback reports (values as port_probe_test finds). */
    private static final Nic FELL_BACK = Nic.newBuilder().setName("net_ring0").setLinkUp(true)
            .addDispatchModes(DispatchMode.DISPATCH_SINGLE).setActiveMode(DispatchMode.DISPATCH_SINGLE)
            .setRequestedMode(DispatchMode.DISPATCH_VMDQ).addTagTypes(TagType.TAG_MAC).addTagTypes(TagType.TAG_VLAN)
            .setCapabilities(NicCapabilities.newBuilder().setDriver("net_ring").setMaxRxQueues(16)
                                     .setMaxMacAddrs(1).addRteFlowErrors("queue: Function not implemented"))
            .addRefusals(DispatchRefusal.newBuilder().setMode(DispatchMode.DISPATCH_VMDQ)
                                 .setReason("port net_ring0 has no VMDq (its driver reports max_vmdq_pools 0)"))
            .addRefusals(DispatchRefusal.newBuilder().setMode(DispatchMode.DISPATCH_RSS)
                                 .setReason("port net_ring0 has no RSS over IP/TCP/UDP"))
            .build();

    @Test
    public void dispatchChoiceIsReadableOnThePort() {
        PortDescription p = ServerDescriptions.ports(ServerResources.newBuilder().addNics(FELL_BACK).build()).get(0);
        assertEquals("single (asked vmdq)", p.annotations().value(ServerDescriptions.DISPATCH));
        assertEquals("net_ring: no rte_flow; no VMDq; no rss; 1 MAC; no vlan filter",
                     p.annotations().value(ServerDescriptions.DISPATCH_CAPABILITIES));
        assertEquals("vmdq: port net_ring0 has no VMDq (its driver reports max_vmdq_pools 0); "
                             + "rss: port net_ring0 has no RSS over IP/TCP/UDP",
                     p.annotations().value(ServerDescriptions.DISPATCH_REFUSALS));
        NicDispatch d = NicDispatch.of(FELL_BACK);
        assertEquals("vmdq", d.requested());
        assertEquals(List.of("single"), d.possible());
        assertTrue(d.dispatches("VLAN"));
        assertTrue(d.probed());
        NicDispatch fanout = NicDispatch.of(RES.getNics(0));
        assertEquals("rte-flow", fanout.summary());
        assertEquals("not probed", fanout.capabilitySummary());
        assertEquals("", fanout.requested());
        NicDispatch pools = NicDispatch.of(Nic.newBuilder().setActiveMode(DispatchMode.DISPATCH_VMDQ).setAutoMode(true)
                                                   .addTagTypes(TagType.TAG_MAC).build());
        assertEquals("vmdq (auto)", pools.summary());
        assertFalse(pools.dispatches("vlan"));
    }

    @Test
    public void portStatisticsFollowTheSameNumbering() {
        Stats s = Stats.newBuilder()
                .addPorts(PortStats.newBuilder().setNic("eth1").setRxPackets(5).setRxBytes(300).setTxPackets(4)
                                  .setTxBytes(240).setRxDropped(1).setTxDropped(2))
                .addPorts(PortStats.newBuilder().setNic("gone0").setRxPackets(1))
                .build();
        List<PortStatistics> stats = ServerDescriptions.portStatistics(DEV, NicPorts.of(RES), s);
        assertEquals(1, stats.size());
        PortStatistics p = stats.get(0);
        assertEquals(PortNumber.portNumber(2), p.portNumber());
        assertEquals(5, p.packetsReceived());
        assertEquals(300, p.bytesReceived());
        assertEquals(4, p.packetsSent());
        assertEquals(240, p.bytesSent());
        assertEquals(1, p.packetsRxDropped());
        assertEquals(2, p.packetsTxDropped());
    }
}
