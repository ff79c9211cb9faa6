package org.metron.drivers.server;

import com.google.protobuf.ByteString;
import org.junit.Test;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.ServerResources;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
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
import org.onosproject.net.flow.instructions.Instructions;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class NicRuleTranslatorTest {

    private static final DeviceId DEV = DeviceId.deviceId("metron:127.0.0.1:50051");
    private static final NicPorts PORTS = NicPorts.of(ServerResources.newBuilder()
            .addNics(Nic.newBuilder().setName("net_null0"))
            .addNics(Nic.newBuilder().setName("eth1")).build());
    private final NicRuleTranslator t = new NicRuleTranslator(PORTS);

    private static FlowRule rule(TrafficSelector s, TrafficTreatment tr, int priority) {
        return DefaultFlowRule.builder().forDevice(DEV).withCookie(0xfedcba9876543210L)
                .withPriority(priority).withSelector(s).withTreatment(tr).makePermanent().build();
    }

    private static TrafficTreatment queue(long q) {
        return DefaultTrafficTreatment.builder().add(Instructions.setQueue(q, null)).build();
    }

    @Test
    public void tagDispatchRuleKeepsAll64IdBitsAndInvertsPriority() {
        FlowRule fr = rule(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(2))
                                   .matchEthDstMasked(MacAddress.valueOf("02:4d:00:07:00:00"),
                                                      MacAddress.valueOf("ff:ff:ff:ff:00:00")).build(),
                           queue(3), 40000);
        NicRule r = t.toNicRule(fr);
        assertEquals(0xfedcba9876543210L, r.getId());
        assertEquals("eth1", r.getNic());
        assertEquals(65535 - 40000, r.getPriority());
        assertEquals("02:4d:00:07:00:00", r.getMatch().getEthDst());
        assertEquals("ff:ff:ff:ff:00:00", r.getMatch().getEthDstMask());
        assertEquals(3, r.getAction().getQueue());

        FlowRule back = t.toFlowRule(DEV, r);
        assertEquals(fr.id(), back.id());
        assertEquals(fr.priority(), back.priority());
        assertEquals(fr.selector(), back.selector());
        assertEquals(fr.treatment(), back.treatment());
    }

    @Test
    public void fiveTupleRulesRoundTripForV4AndV6() {
        TrafficSelector v4 = DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                .matchEthType(Ethernet.TYPE_IPV4).matchIPSrc(IpPrefix.valueOf("10.0.0.0/8"))
                .matchIPDst(IpPrefix.valueOf("192.168.1.7/32")).matchIPProtocol(IPv4.PROTOCOL_TCP)
                .matchTcpDstMasked(TpPort.tpPort(0x1000), TpPort.tpPort(0xf000)).matchTcpSrc(TpPort.tpPort(80))
                .matchVlanId(VlanId.vlanId((short) 100)).build();
        TrafficSelector v6 = DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                .matchEthType(Ethernet.TYPE_IPV6).matchIPv6Src(IpPrefix.valueOf("2001:db8::/32"))
                .matchIPProtocol(IPv4.PROTOCOL_UDP).matchUdpDst(TpPort.tpPort(53)).build();
        for (TrafficSelector s : new TrafficSelector[]{v4, v6}) {
            for (TrafficTreatment tr : new TrafficTreatment[]{queue(1), DefaultTrafficTreatment.builder().drop().build(),
                    DefaultTrafficTreatment.builder().writeMetadata(0xdeadbeefL, 0xffffffffL).build()}) {
                FlowRule fr = rule(s, tr, 7);
                FlowRule back = t.toFlowRule(DEV, t.toNicRule(fr));
                assertEquals(fr.selector(), back.selector());
                assertEquals(fr.treatment(), back.treatment());
                assertEquals(7, back.priority());
            }
        }
        NicRule r = t.toNicRule(rule(v4, queue(1), 7));
        assertEquals(ByteString.copyFrom(new byte[]{10, 0, 0, 0}), r.getMatch().getIpSrc());
        assertEquals(8, r.getMatch().getIpSrcPrefix());
        assertEquals(0xf000, r.getMatch().getL4DstMask());
        assertEquals(0xffff, r.getMatch().getL4SrcMask());
        assertEquals(100, r.getMatch().getVlan());
        assertEquals(0x0800, r.getMatch().getEtherType());
    }

    @Test
    public void refusesWhatNicsCannotDoNamingTheRule() {
        TrafficSelector noPort = DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                                                  () -> t.toNicRule(rule(noPort, queue(1), 1)));
        assertTrue(e.getMessage(), e.getMessage().contains("fedcba9876543210") && e.getMessage().contains("IN_PORT"));

        TrafficSelector unknownPort = DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(9)).build();
        e = assertThrows(IllegalArgumentException.class, () -> t.toNicRule(rule(unknownPort, queue(1), 1)));
        assertTrue(e.getMessage(), e.getMessage().contains("9"));

        TrafficSelector ok = DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)).build();
        e = assertThrows(IllegalArgumentException.class, () -> t.toNicRule(rule(ok,
                DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:00:00:00:00:01")).build(), 1)));
        assertTrue(e.getMessage(), e.getMessage().contains("L2MODIFICATION"));

        TrafficSelector pcp = DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                .matchVlanPcp((byte) 3).build();
        e = assertThrows(IllegalArgumentException.class, () -> t.toNicRule(rule(pcp, queue(1), 1)));
        assertTrue(e.getMessage(), e.getMessage().contains("VLAN_PCP"));

        FlowRule fromApp = DefaultFlowRule.builder().forDevice(DEV).fromApp(new DefaultApplicationId(1, "x"))
                .withPriority(1).withSelector(ok).withTreatment(queue(0)).makePermanent().build();
        assertEquals(fromApp.id().value(), t.toNicRule(fromApp).getId());
    }

    @Test
    public void refusesAgentRulesOnUnknownNics() {
        NicRule r = NicRule.newBuilder().setId(1).setNic("eth9").build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.toFlowRule(DEV, r));
        assertTrue(e.getMessage(), e.getMessage().contains("eth9"));
    }
}
