package org.metron.drivers.p4;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.PiCriterion;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.model.PiPipelineInterpreter.PiInterpreterException;
import p4.config.v1.P4InfoOuterClass;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Update;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Metron's offload rules → tagger table entries → P4Runtime Write RPCs, received by a P4Runtime server over
 * in-process gRPC that checks them against the P4Info as a switch would.
 */
public class TaggerP4RuntimeWriteTest {

    private static final long DEVICE = 1;
    private static final DeviceId DEV = DeviceId.deviceId("device:p4:1");
    private static final P4InfoOuterClass.P4Info P4INFO = P4RuntimeEncoder.taggerP4Info();

    private final PiPipeconf pipeconf = MetronTaggerPipeconf.build();
    private final MetronTaggerInterpreter interpreter = new MetronTaggerInterpreter();
    private final P4RuntimeEncoder encoder = new P4RuntimeEncoder(P4INFO);
    private InProcessP4RuntimeServer sw;
    private ManagedChannel channel;

    @Before
    public void setUp() throws Exception {
        sw = new InProcessP4RuntimeServer(DEVICE, P4INFO);
        channel = sw.channel();
    }

    @After
    public void tearDown() {
        channel.shutdownNow();
        sw.close();
    }

    private static FlowRule rule(long id, int priority, TrafficSelector s, TrafficTreatment t) {
        return DefaultFlowRule.builder().forDevice(DEV).withCookie(id).withPriority(priority).forTable(0)
                .withSelector(s).withTreatment(t).makePermanent().build();
    }

    private TableEntry encode(FlowRule r) throws PiInterpreterException {
        return encoder.encode(PiTableEntryTranslator.translate(r, pipeconf.pipelineModel(), interpreter));
    }

    private static int id(String name) {
        for (P4InfoOuterClass.Table t : P4INFO.getTablesList()) {
            if (t.getPreamble().getName().equals(name)) {
                return t.getPreamble().getId();
            }
            for (P4InfoOuterClass.MatchField f : t.getMatchFieldsList()) {
                if (f.getName().equals(name)) {
                    return f.getId();
                }
            }
        }
        return P4INFO.getActionsList().stream().filter(a -> a.getPreamble().getName().equals(name))
                .findFirst().orElseThrow().getPreamble().getId();
    }

    /** A parameter's value, found by its P4Info id (P4Runtime does not order parameters). */
    private static ByteString param(TableEntry e, String action, String name) {
        int pid = P4INFO.getActionsList().stream().filter(a -> a.getPreamble().getName().equals(action))
                .findFirst().orElseThrow().getParamsList().stream().filter(p -> p.getName().equals(name))
                .findFirst().orElseThrow().getId();
        return e.getAction().getAction().getParamsList().stream().filter(p -> p.getParamId() == pid)
                .findFirst().orElseThrow().getValue();
    }

    private static ByteString b(int... bytes) {
        byte[] a = new byte[bytes.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) bytes[i];
        }
        return ByteString.copyFrom(a);
    }

    // The four kinds of rule the controller offloads: MAC tag, VLAN tag, forward untouched, drop.
    private static final FlowRule MAC_TAG = rule(0xa000000000000001L, 300,
            DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)).matchEthType(Ethernet.TYPE_IPV4)
                    .matchIPSrc(IpPrefix.valueOf("10.0.0.0/8")).matchIPProtocol(IPv4.PROTOCOL_UDP)
                    .matchUdpDst(TpPort.tpPort(53)).build(),
            DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:07:00:03"))
                    .setOutput(PortNumber.portNumber(2)).build());
    private static final FlowRule VLAN_TAG = rule(0xa000000000000002L, 200,
            DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV6)
                    .matchIPv6Dst(IpPrefix.valueOf("2001:db8::/32")).matchIPProtocol(IPv4.PROTOCOL_TCP)
                    .matchPi(PiCriterion.builder().matchRange(TaggerP4Names.L4_DST_PORT, 1000, 2000).build())
                    .build(),
            DefaultTrafficTreatment.builder().pushVlan().setVlanId(VlanId.vlanId((short) 7))
                    .setEthDst(MacAddress.valueOf("02:4d:00:00:00:05")).setOutput(PortNumber.portNumber(3)).build());
    private static final FlowRule FORWARD = rule(0xa000000000000003L, 100,
            DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4).matchIPProtocol(IPv4.PROTOCOL_TCP)
                    .matchTcpSrcMasked(TpPort.tpPort(0x1000), TpPort.tpPort(0xf000)).build(),
            DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(4)).build());
    private static final FlowRule DROP = rule(0xa000000000000004L, 1,
            DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4).build(),
            DefaultTrafficTreatment.builder().drop().build());

    @Test
    public void writesTheFourRuleKindsAsTaggerEntries() throws Exception {
        List<TableEntry> entries = new ArrayList<>();
        for (FlowRule r : List.of(MAC_TAG, VLAN_TAG, FORWARD, DROP)) {
            entries.add(encode(r));
        }
        try (P4RuntimeWriter w = P4RuntimeWriter.becomePrimary(channel, DEVICE, 10, Duration.ofSeconds(5))) {
            w.insert(entries);
        }
        assertEquals(1, sw.writes.size());
        List<Update> updates = sw.writes.get(0).getUpdatesList();
        assertEquals(4, updates.size());
        assertTrue(updates.stream().allMatch(u -> u.getType() == Update.Type.INSERT));
        assertEquals(4, sw.table.size());

        int table = id("TaggerIngress.tagger");
        TableEntry mac = updates.get(0).getEntity().getTableEntry();
        assertEquals(table, mac.getTableId());
        assertEquals(300, mac.getPriority());
        assertEquals(0xa000000000000001L, mac.getControllerMetadata());
        Map<Integer, FieldMatch> m = mac.getMatchList().stream()
                .collect(Collectors.toMap(FieldMatch::getFieldId, f -> f));
        assertEquals(5, m.size());
        assertEquals(b(1), m.get(id("ingress_port")).getTernary().getValue());
        assertEquals(b(0x01, 0xff), m.get(id("ingress_port")).getTernary().getMask());
        assertEquals(b(0x08, 0x00), m.get(id("eth_type")).getTernary().getValue());
        assertEquals(b(10, 0, 0, 0), m.get(id("ipv4_src")).getTernary().getValue());
        assertEquals(b(0xff, 0, 0, 0), m.get(id("ipv4_src")).getTernary().getMask());
        assertEquals(b(17), m.get(id("ip_proto")).getTernary().getValue());
        assertEquals(b(53), m.get(id("l4_dst_port")).getRange().getLow());
        assertEquals(b(53), m.get(id("l4_dst_port")).getRange().getHigh());
        assertEquals(id("TaggerIngress.set_tag_mac"), mac.getAction().getAction().getActionId());
        assertEquals(b(0x02, 0x4d, 0x00, 0x07, 0x00, 0x03), param(mac, "TaggerIngress.set_tag_mac", "tag"));
        assertEquals(b(2), param(mac, "TaggerIngress.set_tag_mac", "port"));

        TableEntry vlan = updates.get(1).getEntity().getTableEntry();
        Map<Integer, FieldMatch> v = vlan.getMatchList().stream()
                .collect(Collectors.toMap(FieldMatch::getFieldId, f -> f));
        assertEquals(b(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                     v.get(id("ipv6_dst")).getTernary().getValue());
        assertEquals(b(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                     v.get(id("ipv6_dst")).getTernary().getMask());
        assertEquals(b(0x03, 0xe8), v.get(id("l4_dst_port")).getRange().getLow());
        assertEquals(b(0x07, 0xd0), v.get(id("l4_dst_port")).getRange().getHigh());
        assertEquals(id("TaggerIngress.push_vlan_tag"), vlan.getAction().getAction().getActionId());
        assertEquals(b(7), param(vlan, "TaggerIngress.push_vlan_tag", "vid"));
        assertEquals(b(0x02, 0x4d, 0, 0, 0, 0x05), param(vlan, "TaggerIngress.push_vlan_tag", "tag"));
        assertEquals(b(3), param(vlan, "TaggerIngress.push_vlan_tag", "port"));

        TableEntry fwd = updates.get(2).getEntity().getTableEntry();
        FieldMatch sport = fwd.getMatchList().stream().filter(f -> f.getFieldId() == id("l4_src_port"))
                .findFirst().orElseThrow();
        assertEquals(b(0x10, 0x00), sport.getRange().getLow());
        assertEquals(b(0x1f, 0xff), sport.getRange().getHigh());
        assertEquals(id("TaggerIngress.forward"), fwd.getAction().getAction().getActionId());

        TableEntry drop = updates.get(3).getEntity().getTableEntry();
        assertEquals(id("TaggerIngress.drop"), drop.getAction().getAction().getActionId());
        assertEquals(0, drop.getAction().getAction().getParamsCount());
    }

    @Test
    public void deleteRemovesOnlyThatEntry() throws Exception {
        try (P4RuntimeWriter w = P4RuntimeWriter.becomePrimary(channel, DEVICE, 10, Duration.ofSeconds(5))) {
            w.insert(List.of(encode(MAC_TAG), encode(DROP)));
            w.delete(List.of(encode(MAC_TAG)));
        }
        assertEquals(1, sw.table.size());
        assertEquals(0xa000000000000004L, sw.table.values().iterator().next().getControllerMetadata());
    }

    @Test
    public void aDuplicateInsertFailsTheWriteAndLeavesTheTable() throws Exception {
        try (P4RuntimeWriter w = P4RuntimeWriter.becomePrimary(channel, DEVICE, 10, Duration.ofSeconds(5))) {
            w.insert(List.of(encode(MAC_TAG)));
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                                                    () -> w.insert(List.of(encode(DROP), encode(MAC_TAG))));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        }
        assertEquals(1, sw.table.size());
    }

    @Test
    public void onlyThePrimaryWrites() throws Exception {
        try (P4RuntimeWriter first = P4RuntimeWriter.becomePrimary(channel, DEVICE, 10, Duration.ofSeconds(5));
             P4RuntimeWriter second = P4RuntimeWriter.becomePrimary(channel, DEVICE, 20, Duration.ofSeconds(5))) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                                                    () -> first.insert(List.of(encode(DROP))));
            assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
            second.insert(List.of(encode(DROP)));
        }
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> P4RuntimeWriter.becomePrimary(channel, DEVICE, 5, Duration.ofSeconds(5)));
        assertTrue(e.getMessage(), e.getMessage().contains("not primary"));
        assertEquals(1, sw.table.size());
    }
}
