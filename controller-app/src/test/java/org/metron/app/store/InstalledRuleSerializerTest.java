package org.metron.app.store;

import org.junit.Test;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.testing.Fixtures;
import org.onlab.packet.EthType;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.Ip6Address;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onlab.util.KryoNamespace;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.store.serializers.KryoNamespaces;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The compact stored form of switch rules decodes to exactly the rule that was stored, whatever it holds. */
public class InstalledRuleSerializerTest {
    private static final KryoNamespace NS = MetronSerializers.NAMESPACE;

    private static FlowRule rule(TrafficSelector.Builder sel, TrafficTreatment.Builder t, int priority) {
        return DefaultFlowRule.builder().forDevice(Fixtures.D1).forTable(0).withPriority(priority)
                .withSelector(sel.build()).withTreatment(t.build()).fromApp(Fixtures.APP).makePermanent().build();
    }

    /** What RulePlanner makes of a firewall entry with a port range: the common case, written as numbers. */
    private static FlowRule offloadRule(int i) {
        return rule(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)).matchEthType((short) 0x800)
                        .matchIPProtocol((byte) 6).matchIPSrc(IpPrefix.valueOf(Ip4Address.valueOf(0x0a010000 + i), 32))
                        .matchTcpDstMasked(TpPort.tpPort(1024), TpPort.tpPort(0xfc00)),
                DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:01:00:07"))
                        .setOutput(PortNumber.portNumber(2)), 1000 + i);
    }

    private static void assertRoundTrip(InstalledRule r) {
        InstalledRule back = NS.deserialize(NS.serialize(r));
        assertEquals(r.role(), back.role());
        assertEquals(r.rule().id(), back.rule().id());
        assertTrue("exact match for " + r, back.rule().exactMatch(r.rule()));
        assertEquals(r.rule().selector(), back.rule().selector());
        assertEquals(r.rule().treatment(), back.rule().treatment());
        assertEquals(r.rule().appId(), back.rule().appId());
        assertEquals(r.rule().isPermanent(), back.rule().isPermanent());
        assertEquals(r, back);
    }

    @Test
    public void offloadTransitAndReturnRulesRoundTrip() {
        assertRoundTrip(new InstalledRule(Role.OFFLOAD, offloadRule(3)));
        assertRoundTrip(new InstalledRule(Role.OFFLOAD, rule(DefaultTrafficSelector.builder()
                .matchInPort(PortNumber.portNumber(1)).matchEthType((short) 0x800).matchIPProtocol((byte) 17)
                .matchIPDst(IpPrefix.valueOf("10.0.0.0/8")).matchUdpSrc(TpPort.tpPort(53)),
                DefaultTrafficTreatment.builder().drop(), 1200)));
        assertRoundTrip(new InstalledRule(Role.TRANSIT, rule(DefaultTrafficSelector.builder()
                .matchInPort(PortNumber.portNumber(3)).matchEthDstMasked(MacAddress.valueOf("02:4d:00:01:00:00"),
                        MacAddress.valueOf("ff:ff:ff:ff:00:00")),
                DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(4)), 60_000)));
        assertRoundTrip(new InstalledRule(Role.RETURN, rule(DefaultTrafficSelector.builder()
                .matchInPort(PortNumber.portNumber(4)).matchEthDst(MacAddress.valueOf("02:4d:00:01:ff:fe"))
                .matchEthSrc(MacAddress.valueOf("00:00:00:00:00:01")),
                DefaultTrafficTreatment.builder().setEthSrc(MacAddress.valueOf("00:00:00:00:00:02"))
                        .setOutput(PortNumber.portNumber(2)), 61_000)));
    }

    @Test
    public void criteriaAndInstructionsWithoutANumberFormRoundTripThroughKryo() {
        // VLAN, IPv6, DSCP/ECN, ICMP, SCTP, header writes: the generic path inside the compact record
        assertRoundTrip(new InstalledRule(Role.OFFLOAD, rule(DefaultTrafficSelector.builder()
                .matchInPort(PortNumber.portNumber(1)).matchVlanId(VlanId.vlanId((short) 12))
                .matchEthType((short) 0x86dd).matchIPProtocol((byte) 132)
                .matchIPv6Src(IpPrefix.valueOf(Ip6Address.valueOf("2001:db8::1"), 128))
                .matchIPDscp((byte) 10).matchIPEcn((byte) 1).matchSctpDst(TpPort.tpPort(9)),
                DefaultTrafficTreatment.builder().pushVlan().setVlanId(VlanId.vlanId((short) 7))
                        .setIpSrc(Ip4Address.valueOf("192.0.2.1")).setTcpDst(TpPort.tpPort(80)).decNwTtl()
                        .popVlan().setOutput(PortNumber.portNumber(2)), 1001)));
        assertRoundTrip(new InstalledRule(Role.OFFLOAD, rule(DefaultTrafficSelector.builder()
                .matchInPort(PortNumber.portNumber(1)).matchEthType(EthType.EtherType.IPV4.ethType().toShort())
                .matchIPProtocol((byte) 1).matchIcmpType((byte) 8).matchIPSrc(IpPrefix.valueOf("1.2.3.0/24")),
                DefaultTrafficTreatment.builder().setOutput(PortNumber.CONTROLLER), 1002)));
    }

    @Test
    public void treatmentsBeyondImmediateInstructionsAreStoredWhole() {
        FlowRule deferred = rule(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)),
                DefaultTrafficTreatment.builder().deferred().setOutput(PortNumber.portNumber(2)).transition(3), 5);
        assertRoundTrip(new InstalledRule(Role.TRANSIT, deferred));
        FlowRule temporary = DefaultFlowRule.builder().forDevice(Fixtures.D2).forTable(1).withPriority(9)
                .withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(5)).build())
                .withTreatment(DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(6)).build())
                .withCookie(0x4d00_0000_1234_5678L).makeTemporary(30).withHardTimeout(60).build();
        assertRoundTrip(new InstalledRule(Role.RETURN, temporary));
    }

    @Test
    public void aListOfFirewallRulesRoundTripsSmallerThanItsGenericEncoding() {
        KryoNamespace generic = KryoNamespace.newBuilder().register(KryoNamespaces.API)
                .nextId(KryoNamespaces.BEGIN_USER_CUSTOM_ID).register(Role.class, InstalledRule.class)
                .build("generic");
        List<InstalledRule> rules = new java.util.ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            rules.add(new InstalledRule(Role.OFFLOAD, offloadRule(i)));
        }
        int compact = NS.serialize(rules).length;
        int whole = generic.serialize(rules).length;
        assertTrue("compact " + compact + " bytes vs generic " + whole, compact < whole);
        assertTrue("at most 100 bytes per rule, got " + compact / 1000, compact < 100 * 1000);
        assertEquals(rules, NS.deserialize(NS.serialize(rules)));
    }
}
