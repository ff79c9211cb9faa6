package org.metron.embedded.net;

import org.metron.openflow.FlowRuleTranslator;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OfSwitchListener;
import org.metron.openflow.OpenFlowController;

import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.embedded.topology.EmulatedNetwork;
import org.onlab.packet.EthType;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.IpAddress;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFFlowStatsEntry;
import org.projectfloodlight.openflow.protocol.OFPortStatsEntry;
import org.projectfloodlight.openflow.protocol.OFPortStatus;
import org.projectfloodlight.openflow.protocol.OFPortState;
import org.projectfloodlight.openflow.types.DatapathId;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThat;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** The OpenFlow 1.3 southbound against a real OVS bridge (topology `single`: src=1, server=2, sink=3). */
public class OpenFlowSouthboundTest {
    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();
    private static final DeviceId S1 = DeviceId.deviceId("of:0000000000000001");
    private static final DefaultApplicationId APP = new DefaultApplicationId(7, "org.metron.test");
    private static final LinkedBlockingQueue<OFPortStatus> PORT_EVENTS = new LinkedBlockingQueue<>();
    private static final LinkedBlockingQueue<OFFlowRemoved> REMOVED = new LinkedBlockingQueue<>();

    private static OpenFlowController controller;
    private static EmulatedNetwork net;
    private static OfSwitch sw;
    private static FlowRuleTranslator translator;

    @BeforeClass
    public static void up() throws Exception {
        Assume.assumeTrue("needs root and OVS", EmulatedNetwork.available());
        controller = OpenFlowController.listen(new InetSocketAddress("127.0.0.1", 0), 5000);
        controller.addListener(new OfSwitchListener() {
            @Override
            public void portStatus(OfSwitch s, OFPortStatus status) {
                PORT_EVENTS.add(status);
            }

            @Override
            public void flowRemoved(OfSwitch s, OFFlowRemoved removed) {
                REMOVED.add(removed);
            }
        });
        net = EmulatedNetwork.up("single", controller.port(), TMP.getRoot().toPath());
        sw = controller.await(DatapathId.of(1), 15_000);
        translator = new FlowRuleTranslator(sw.factory());
    }

    @AfterClass
    public static void down() throws Exception {
        if (net != null) {
            net.close();
        }
        if (controller != null) {
            controller.close();
        }
    }

    @Before
    public void clear() {
        sw.send(List.of(translator.deleteAll())).join();
    }

    static FlowRule rule(int priority, TrafficSelector selector, TrafficTreatment treatment) {
        return DefaultFlowRule.builder().forDevice(S1).fromApp(APP).withPriority(priority).makePermanent()
                .withSelector(selector).withTreatment(treatment).build();
    }

    static List<FlowRule> everyCriterionAndAction() {
        return List.of(
                rule(100, DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                        .matchEthType(Ethernet.TYPE_IPV4).matchIPProtocol(IPv4.PROTOCOL_UDP)
                        .matchIPSrc(IpPrefix.valueOf("10.0.0.0/24")).matchIPDst(IpPrefix.valueOf("10.0.1.7/32"))
                        .matchUdpDst(TpPort.tpPort(53)).build(),
                     DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:01:00:07"))
                        .setOutput(PortNumber.portNumber(2)).build()),
                rule(90, DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                        .matchIPProtocol(IPv4.PROTOCOL_TCP).matchTcpSrcMasked(TpPort.tpPort(1024),
                                                                               TpPort.tpPort(0xfc00))
                        .matchTcpDst(TpPort.tpPort(80)).build(),
                     DefaultTrafficTreatment.builder().pushVlan().setVlanId(VlanId.vlanId((short) 100))
                        .setOutput(PortNumber.portNumber(2)).build()),
                rule(80, DefaultTrafficSelector.builder().matchVlanId(VlanId.vlanId((short) 100))
                        .matchEthDstMasked(MacAddress.valueOf("02:4d:00:01:00:00"),
                                           MacAddress.valueOf("ff:ff:ff:ff:00:00")).build(),
                     DefaultTrafficTreatment.builder().popVlan().setEthSrc(MacAddress.valueOf("02:00:00:00:00:09"))
                        .setOutput(PortNumber.portNumber(3)).build()),
                rule(70, DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV6)
                        .matchIPv6Src(IpPrefix.valueOf("2001:db8::/32")).matchIPv6Dst(IpPrefix.valueOf("::1/128"))
                        .build(),
                     DefaultTrafficTreatment.builder().drop().build()),
                rule(60, DefaultTrafficSelector.builder().matchEthSrc(MacAddress.valueOf("02:00:00:00:00:01"))
                        .matchEthType(Ethernet.TYPE_IPV4).matchIPProtocol(IPv4.PROTOCOL_UDP)
                        .matchUdpSrcMasked(TpPort.tpPort(0x1000), TpPort.tpPort(0xf000)).build(),
                     DefaultTrafficTreatment.builder().drop().build()),
                // what a class the switch forwards alone writes (TO_EGRESS): addresses, ports, TTL
                rule(50, DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                        .matchIPProtocol(IPv4.PROTOCOL_UDP).matchUdpDst(TpPort.tpPort(5000)).build(),
                     DefaultTrafficTreatment.builder().setIpSrc(IpAddress.valueOf("192.0.2.1"))
                        .setIpDst(IpAddress.valueOf("10.9.9.9")).setUdpSrc(TpPort.tpPort(1024))
                        .setUdpDst(TpPort.tpPort(8080)).decNwTtl().setOutput(PortNumber.portNumber(3)).build()),
                rule(40, DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV6)
                        .matchIPProtocol(IPv4.PROTOCOL_TCP).matchTcpDst(TpPort.tpPort(80)).build(),
                     DefaultTrafficTreatment.builder().setIpDst(IpAddress.valueOf("2001:db8::9"))
                        .setTcpSrc(TpPort.tpPort(2000)).setTcpDst(TpPort.tpPort(8080)).decNwTtl()
                        .setOutput(PortNumber.portNumber(2)).build()),
                // what the synthesizer's OpenFlow profile matches besides ports: ICMP types, DSCP + ECN (an exact
                // TOS), untagged frames only
                rule(30, DefaultTrafficSelector.builder().matchVlanId(VlanId.NONE).matchEthType(Ethernet.TYPE_IPV4)
                        .matchIPProtocol(IPv4.PROTOCOL_ICMP).matchIcmpType((byte) 8).matchIPDscp((byte) 46)
                        .matchIPEcn((byte) 1).build(),
                     DefaultTrafficTreatment.builder().drop().build()),
                rule(20, DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV6)
                        .matchIPProtocol((byte) 58).matchIcmpv6Type((byte) 128).build(),
                     DefaultTrafficTreatment.builder().drop().build()));
    }

    @Test
    public void switchCompletesTheHandshakeWithItsDatapathIdAndPorts() {
        assertEquals("of:0000000000000001", sw.deviceId());
        assertTrue(sw.ports().keySet().containsAll(List.of(1, 2, 3)));
    }

    @Test
    public void everyCriterionAndActionReachesOvsAndReadsBackAsTheSameRule() throws Exception {
        List<FlowRule> rules = everyCriterionAndAction();
        sw.sendAtomically(rules.stream().map(translator::add).collect(Collectors.toList())).join();

        String dump = net.ofctl("s1", "dump-flows");
        assertThat(dump, containsString("priority=100,udp,in_port=1,nw_src=10.0.0.0/24,nw_dst=10.0.1.7,tp_dst=53 "
                + "actions=set_field:02:4d:00:01:00:07->eth_dst,output:2"));
        assertThat(dump, containsString("priority=90,tcp,tp_src=0x400/0xfc00,tp_dst=80 "
                + "actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2"));
        assertThat(dump, containsString("priority=80,dl_vlan=100,dl_dst=02:4d:00:01:00:00/ff:ff:ff:ff:00:00 "
                + "actions=pop_vlan,set_field:02:00:00:00:00:09->eth_src,output:3"));
        assertThat(dump, containsString("priority=70,ipv6,ipv6_src=2001:db8::/32,ipv6_dst=::1 actions=drop"));
        assertThat(dump, containsString("priority=60,udp,dl_src=02:00:00:00:00:01,tp_src=0x1000/0xf000 actions=drop"));
        assertThat(dump, containsString("priority=50,udp,tp_dst=5000 actions=set_field:192.0.2.1->ip_src,"
                + "set_field:10.9.9.9->ip_dst,set_field:1024->udp_src,set_field:8080->udp_dst,dec_ttl,output:3"));
        assertThat(dump, containsString("priority=40,tcp6,tp_dst=80 actions=set_field:2001:db8::9->ipv6_dst,"
                + "set_field:2000->tcp_src,set_field:8080->tcp_dst,dec_ttl,output:2"));
        assertThat(dump, containsString("priority=30,icmp,vlan_tci=0x0000/0x1fff,nw_tos=184,nw_ecn=1,icmp_type=8 "
                + "actions=drop"));
        assertThat(dump, containsString("priority=20,icmp6,icmp_type=128 actions=drop"));

        Map<Long, OFFlowStatsEntry> byCookie = sw.flowStats().join().stream()
                .collect(Collectors.toMap(e -> e.getCookie().getValue(), Function.identity()));
        assertEquals(rules.size(), byCookie.size());
        for (FlowRule r : rules) {
            OFFlowStatsEntry e = byCookie.get(r.id().value());
            assertNotNull("no entry with cookie " + r.id(), e);
            FlowRule back = translator.toRule(S1, e);
            assertEquals(r.selector(), back.selector());
            assertEquals(r.treatment().allInstructions(), back.treatment().allInstructions());
            assertEquals(r.priority(), back.priority());
            assertEquals(r.id(), back.id());
        }
    }

    @Test
    public void aBundleWithOneRejectedRuleLeavesTheSwitchUntouched() throws Exception {
        FlowRule kept = rule(5, DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(3)).build(),
                             DefaultTrafficTreatment.builder().drop().build());
        sw.sendAtomically(List.of(translator.add(kept))).join();
        List<FlowRule> batch = new ArrayList<>(everyCriterionAndAction());
        // ip_proto without eth_type: OVS rejects it (missing prerequisite) while the bundle is open.
        batch.add(2, rule(50, DefaultTrafficSelector.builder().matchIPProtocol(IPv4.PROTOCOL_TCP).build(),
                          DefaultTrafficTreatment.builder().drop().build()));
        try {
            sw.sendAtomically(batch.stream().map(translator::add).collect(Collectors.toList())).join();
            fail("the bundle must be refused");
        } catch (CompletionException e) {
            assertThat(e.getCause().getMessage(), containsString("of:0000000000000001 rejected bundled flow mod #2"));
            assertThat(e.getCause().getMessage(), containsString("BAD_PREREQ"));
        }
        List<OFFlowStatsEntry> left = sw.flowStats().join();
        assertEquals("only the rule installed before the failed bundle remains", 1, left.size());
        assertEquals(kept.id().value(), left.get(0).getCookie().getValue());
        assertEquals(1L, (long) sw.activeFlows().join());
        // The channel is still usable after a discarded bundle.
        sw.sendAtomically(List.of(translator.add(everyCriterionAndAction().get(0)))).join();
        assertEquals(2, sw.flowStats().join().size());
        assertEquals(2L, (long) sw.activeFlows().join());
    }

    private static List<FlowRule> firewall(int n) {
        List<FlowRule> rules = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rules.add(rule(1000 + i % 7, DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                            .matchEthType(Ethernet.TYPE_IPV4).matchIPProtocol(IPv4.PROTOCOL_TCP)
                            .matchIPSrc(IpPrefix.valueOf(org.onlab.packet.Ip4Address.valueOf(0x0a000000 + i), 32))
                            .matchTcpDst(TpPort.tpPort(80)).build(),
                    DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:01:00:07"))
                            .setOutput(PortNumber.portNumber(2)).build()));
        }
        return rules;
    }

    @Test
    public void thousandsOfRulesInOneBundleGoLiveWhole() {
        List<FlowRule> rules = firewall(5000);
        sw.sendAtomically(rules.stream().map(translator::add).collect(Collectors.toList())).join();
        List<OFFlowStatsEntry> live = sw.flowStats().join();
        assertEquals(5000, live.size());
        assertEquals(rules.stream().map(r -> r.id().value()).collect(Collectors.toSet()),
                live.stream().map(e -> e.getCookie().getValue()).collect(Collectors.toSet()));
        assertEquals(5000L, (long) sw.activeFlows().join());
    }

    @Test
    public void aRejectedRuleDeepInALargeBundleIsNamedByItsPosition() {
        List<FlowRule> batch = new ArrayList<>(firewall(4000));
        batch.add(3500, rule(50, DefaultTrafficSelector.builder().matchIPProtocol(IPv4.PROTOCOL_TCP).build(),
                          DefaultTrafficTreatment.builder().drop().build()));
        try {
            sw.sendAtomically(batch.stream().map(translator::add).collect(Collectors.toList())).join();
            fail("the bundle must be refused");
        } catch (CompletionException e) {
            assertThat(e.getCause().getMessage(), containsString("rejected bundled flow mod #3500"));
        }
        assertEquals(0L, (long) sw.activeFlows().join());
        assertEquals(0, sw.flowStats().join().size());
    }

    @Test
    public void strictDeleteRemovesOnlyThatRule() {
        List<FlowRule> rules = everyCriterionAndAction();
        sw.send(rules.stream().map(translator::add).collect(Collectors.toList())).join();
        sw.send(List.of(translator.deleteStrict(rules.get(1)))).join();
        List<Long> cookies = sw.flowStats().join().stream().map(e -> e.getCookie().getValue())
                .collect(Collectors.toList());
        assertEquals(rules.size() - 1, cookies.size());
        assertTrue(!cookies.contains(rules.get(1).id().value()));
    }

    @Test
    public void packetsForwardedByInstalledRulesShowInFlowAndPortCounters() throws Exception {
        FlowRule there = rule(10, DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)).build(),
                              DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(3)).build());
        FlowRule back = rule(10, DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(3)).build(),
                             DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(1)).build());
        long rx1Before = rxPackets(1);
        sw.sendAtomically(List.of(translator.add(there), translator.add(back))).join();
        String received = udpProbe();
        assertEquals("probe", received);
        long forwarded = sw.flowStats().join().stream().filter(e -> e.getCookie().getValue() == there.id().value())
                .mapToLong(e -> e.getPacketCount().getValue()).sum();
        assertTrue("flow counter counts the probes (" + forwarded + ")", forwarded >= 1);
        assertTrue(rxPackets(1) - rx1Before >= forwarded);
    }

    @Test
    public void linkDownAndUpArriveAsPortStatus() throws Exception {
        PORT_EVENTS.clear();
        net.setPortUp("s1", 2, false);
        try {
            OFPortStatus down = PORT_EVENTS.poll(10, TimeUnit.SECONDS);
            assertNotNull("no PORT_STATUS after link down", down);
            assertEquals(2, down.getDesc().getPortNo().getPortNumber());
            assertTrue(down.getDesc().getState().contains(OFPortState.LINK_DOWN)
                               || !sw.ports().get(2).getState().contains(OFPortState.LIVE));
        } finally {
            net.setPortUp("s1", 2, true);
        }
        OFPortStatus up = PORT_EVENTS.poll(10, TimeUnit.SECONDS);
        assertNotNull("no PORT_STATUS after link up", up);
    }

    @Test
    public void anExpiredRuleIsReportedAsFlowRemovedWithItsCookie() throws Exception {
        REMOVED.clear();
        FlowRule shortLived = DefaultFlowRule.builder().forDevice(S1).fromApp(APP).withPriority(9)
                .makeTemporary(1).withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(2))
                        .build()).withTreatment(DefaultTrafficTreatment.builder().drop().build()).build();
        sw.sendAtomically(List.of(translator.add(shortLived))).join();
        OFFlowRemoved removed;
        do {  // deletions by earlier tests are reported too (every Metron rule asks for FLOW_REMOVED)
            removed = REMOVED.poll(10, TimeUnit.SECONDS);
            assertNotNull("no FLOW_REMOVED for an idle rule with a 1 s timeout", removed);
        } while (removed.getCookie().getValue() != shortLived.id().value());
        assertEquals(org.projectfloodlight.openflow.protocol.OFFlowRemovedReason.IDLE_TIMEOUT, removed.getReason());
        assertTrue(sw.flowStats().join().isEmpty());
    }

    @Test
    public void aRuleTheSouthboundCannotExpressIsRejectedBeforeAnythingIsSent() throws Exception {
        org.metron.embedded.net.OpenFlowSwitchProgrammer programmer =
                new org.metron.embedded.net.OpenFlowSwitchProgrammer(controller, APP);
        FlowRule fine = everyCriterionAndAction().get(0);
        FlowRule mpls = rule(8, DefaultTrafficSelector.builder().matchEthType(Ethernet.MPLS_UNICAST)
                .matchMplsLabel(org.onlab.packet.MplsLabel.mplsLabel(17)).build(),
                DefaultTrafficTreatment.builder().drop().build());
        try {
            programmer.install(S1, List.of(fine, mpls)).join();
            fail("an MPLS match must be refused");
        } catch (CompletionException e) {
            assertThat(e.getCause().getMessage(), containsString("rule " + mpls.id()));
            assertThat(e.getCause().getMessage(), containsString("MPLS_LABEL"));
        }
        assertTrue("nothing of the batch reached the switch", sw.flowStats().join().isEmpty());
        programmer.install(S1, List.of(fine)).join();
        assertEquals(1, programmer.entries(S1).size());
        assertEquals(fine, programmer.entries(S1).iterator().next());
    }

    /**
     * What the controller reads a chain's rules from: the switch sends only this application's entries (cookie
     * filter on the app id bits), each read back by its id, also by a programmer that did not install them (a
     * restarted host), and a rule the switch lost is not reported.
     */
    @Test
    public void entriesAreThisAppsRulesAsTheSwitchHoldsThem() {
        org.metron.embedded.net.OpenFlowSwitchProgrammer programmer =
                new org.metron.embedded.net.OpenFlowSwitchProgrammer(controller, APP);
        List<FlowRule> ours = everyCriterionAndAction().subList(0, 3);
        FlowRule other = DefaultFlowRule.builder().forDevice(S1).fromApp(new DefaultApplicationId(8, "other"))
                .withPriority(5).makePermanent().withSelector(DefaultTrafficSelector.builder()
                        .matchInPort(PortNumber.portNumber(3)).build())
                .withTreatment(DefaultTrafficTreatment.builder().drop().build()).build();
        programmer.install(S1, ours).join();
        sw.send(List.of(translator.add(other))).join();

        java.util.Map<Long, FlowRule> read = new java.util.HashMap<>();
        new org.metron.embedded.net.OpenFlowSwitchProgrammer(controller, APP).entries(S1)
                .forEach(e -> read.put(e.id().value(), e));
        assertEquals(ours.stream().map(r -> r.id().value()).collect(Collectors.toSet()), read.keySet());
        for (FlowRule r : ours) {
            FlowRule back = read.get(r.id().value());
            assertEquals(r.selector(), back.selector());
            assertEquals(r.treatment(), back.treatment());
            assertEquals(r.priority(), back.priority());
        }
        sw.send(List.of(translator.deleteStrict(ours.get(1)))).join(); // the switch lost it
        assertEquals(2, programmer.entries(S1).size());
        assertTrue(programmer.entries(S1).stream().noneMatch(e -> e.id().equals(ours.get(1).id())));
    }

    @Test
    public void connectionSurvivesIdleEchoes() throws Exception {
        // OVS probes an idle controller connection with ECHO after ~5 s and drops it without an answer.
        Thread.sleep(11_000);
        assertTrue(sw.isConnected());
        assertTrue(controller.get(DatapathId.of(1)).orElseThrow() == sw);
        sw.barrier().join();
    }

    private long rxPackets(int port) {
        return sw.portStats().join().stream().filter(e -> e.getPortNo().getPortNumber() == port)
                .mapToLong(e -> e.getRxPackets().getValue()).sum();
    }

    private String udpProbe() throws Exception {
        Process sink = new ProcessBuilder("ip", "netns", "exec", net.node("sink").get("netns").asText(),
                "/usr/bin/python3", "-c", "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
                + "s.bind(('0.0.0.0', 5008)); s.settimeout(5); print(s.recv(64).decode())").start();
        net.exec("src", "ip", "neigh", "replace", "10.0.0.2", "lladdr", "02:00:00:00:00:02", "dev", "eth0");
        net.exec("src", "/usr/bin/python3", "-c", "import socket, time\ns = socket.socket(socket.AF_INET, "
                + "socket.SOCK_DGRAM)\nfor _ in range(20):\n    s.sendto(b'probe', ('10.0.0.2', 5008)); time.sleep(0.05)");
        sink.waitFor(10, TimeUnit.SECONDS);
        return new String(sink.getInputStream().readAllBytes()).trim();
    }
}
