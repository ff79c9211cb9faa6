package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.RuleInfo;
import org.metron.app.store.InstalledRule;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.TpPort;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.TrafficSelector;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;

/** Flow ids name a table entry (device, table, priority, match) and nothing else. */
public class FlowIdsTest {

    private static TrafficSelector fw(int src, int prefix, int port, int mask) {
        return DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)).matchEthType((short) 0x800)
                .matchIPProtocol((byte) 6).matchIPSrc(IpPrefix.valueOf(Ip4Address.valueOf(src), prefix))
                .matchTcpDstMasked(TpPort.tpPort(port), TpPort.tpPort(mask)).build();
    }

    private static long id(DeviceId d, int priority, TrafficSelector s) {
        return FlowIds.of(Fixtures.APP, d, 0, priority, s);
    }

    @Test
    public void theSameEntryGetsTheSameIdAndAnyDifferenceAnother() {
        long base = id(Fixtures.D1, 1000, fw(0x0a000001, 32, 1024, 0xfc00));
        assertEquals(base, id(Fixtures.D1, 1000, fw(0x0a000001, 32, 1024, 0xfc00)));
        assertEquals("application id in the top 16 bits", Fixtures.APP.id(), (short) (base >>> 48));
        Set<Long> others = new HashSet<>(List.of(
                id(Fixtures.D2, 1000, fw(0x0a000001, 32, 1024, 0xfc00)),
                id(Fixtures.D1, 1001, fw(0x0a000001, 32, 1024, 0xfc00)),
                FlowIds.of(Fixtures.APP, Fixtures.D1, 1, 1000, fw(0x0a000001, 32, 1024, 0xfc00)),
                id(Fixtures.D1, 1000, fw(0x0a000002, 32, 1024, 0xfc00)),
                id(Fixtures.D1, 1000, fw(0x0a000000, 31, 1024, 0xfc00)),
                id(Fixtures.D1, 1000, fw(0x0a000001, 32, 1025, 0xffff)),
                id(Fixtures.D1, 1000, fw(0x0a000001, 32, 1024, 0xfe00)),
                id(Fixtures.D1, 1000, DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                        .matchEthType((short) 0x800).matchIPProtocol((byte) 17)
                        .matchIPSrc(IpPrefix.valueOf("10.0.0.1/32"))
                        .matchUdpDstMasked(TpPort.tpPort(1024), TpPort.tpPort(0xfc00)).build())));
        assertEquals(8, others.size());
        assertEquals(false, others.contains(base));
    }

    @Test
    public void tensOfThousandsOfFirewallEntriesGetDistinctIds() {
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < 50_000; i++) {
            ids.add(id(Fixtures.D1, 1000 + i % 13, fw(0x0a000000 + i, 32, 1024 << (i % 4), 0xfc00)));
        }
        assertEquals(50_000, ids.size());
    }

    @Test
    public void everyOffloadRuleOfARealChainIsPlannedAndInstalledUnderItsOwnId() {
        World w = new World(1, Synthesis.SYNTHESIZER, 1);
        String json = ChainCompilerTest.demoChain(300).replace("of:0000000000000002/2", Fixtures.S1 + "/3");
        int compiled = w.manager.validate(json).offloadRules();
        assertEquals(ChainState.ACTIVE, w.manager.submit(json).state());
        List<InstalledRule> offload = w.store.installed().get(ChainId.of("demo")).get().value().switchRules()
                .stream().filter(r -> r.role() == RuleInfo.Role.OFFLOAD).collect(Collectors.toList());
        assertEquals(compiled, offload.size());
        assertEquals(compiled, offload.stream().map(r -> r.rule().id()).distinct().count());
        for (InstalledRule r : offload) {
            assertEquals(id(r.rule().deviceId(), r.rule().priority(), r.rule().selector()), r.rule().id().value());
        }
        assertNotEquals(0, compiled);
        assertEquals(compiled, w.switches.entries(Fixtures.D1).stream()
                .filter(e -> e.priority() < RulePlanner.TRANSIT_PRIORITY
                        && e.priority() >= RulePlanner.DEFAULT_DROP_PRIORITY)
                .count());
    }
}
