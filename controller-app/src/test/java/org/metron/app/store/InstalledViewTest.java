package org.metron.app.store;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.MetronMap;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestSwitches;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry.FlowEntryState;
import org.onosproject.net.flow.FlowRule;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The installed state is stored as ids and read from the switches: what a chain has on a device is what the device
 * (ONOS's flow-rule store) holds of the recorded ids, in the states ONOS reports.
 */
public class InstalledViewTest {
    private static final ChainId ID = ChainId.of("web");
    private final TestSwitches switches = new TestSwitches();
    private final MetronMap<ChainId, Object> raw = new LocalStoreFactory().map("installed",
            MetronSerializers.NAMESPACE);
    private final InstalledView view = new InstalledView(raw, switches);

    /** What RulePlanner makes of a firewall entry with a port range (as InstalledRuleSerializerTest). */
    static FlowRule rule(DeviceId d, int i) {
        return DefaultFlowRule.builder().forDevice(d).forTable(0).withPriority(1000 + i)
                .withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                        .matchEthType((short) 0x800).matchIPProtocol((byte) 6)
                        .matchIPSrc(IpPrefix.valueOf(Ip4Address.valueOf(0x0a010000 + i), 32))
                        .matchTcpDstMasked(TpPort.tpPort(1024), TpPort.tpPort(0xfc00)).build())
                .withTreatment(DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:01:00:07"))
                        .setOutput(PortNumber.portNumber(2)).build())
                .fromApp(Fixtures.APP).makePermanent().build();
    }

    private InstalledState installed(int onD1, int onD2) {
        List<InstalledRule> rules = new ArrayList<>();
        for (int i = 0; i < onD2; i++) {
            rules.add(new InstalledRule(Role.TRANSIT, rule(Fixtures.D2, i)));
        }
        for (int i = 0; i < onD1; i++) {
            rules.add(new InstalledRule(Role.OFFLOAD, rule(Fixtures.D1, i)));
        }
        rules.stream().collect(Collectors.groupingBy(r -> r.rule().deviceId(),
                Collectors.mapping(InstalledRule::rule, Collectors.toList())))
                .forEach((d, r) -> switches.install(d, r).join());
        return new InstalledState(ID, Optional.of(DeviceId.deviceId("metron:a")), rules, List.of(7L, 8L), true);
    }

    @Test
    public void aStateReadsBackFromTheSwitchesInInstallOrder() {
        InstalledState st = installed(5, 3);
        view.put(ID, st);
        assertTrue(raw.get(ID).get().value() instanceof InstalledRecord);
        assertEquals(st, view.get(ID).get().value());
        assertEquals(List.of(Fixtures.D2, Fixtures.D1), new ArrayList<>(view.get(ID).get().value().devices()));
        assertEquals(st, view.snapshot().get(ID));
    }

    /**
     * A rule the switch no longer holds, or that ONOS reports REMOVED or FAILED, is not installed; one whose add or
     * removal the device has not confirmed (PENDING_ADD, PENDING_REMOVE) is: a removal still has to ask for it.
     */
    @Test
    public void ruleTheSwitchNoLongerHoldsIsNotInstalledOneWhoseRemovalIsNotConfirmedIs() {
        InstalledState st = installed(5, 3);
        view.put(ID, st);
        FlowRule lost = rule(Fixtures.D1, 0);
        switches.remove(Fixtures.D1, List.of(lost)).join();
        switches.entryState(rule(Fixtures.D1, 1).id().value(), FlowEntryState.PENDING_REMOVE);
        switches.entryState(rule(Fixtures.D1, 2).id().value(), FlowEntryState.PENDING_ADD);
        switches.entryState(rule(Fixtures.D1, 3).id().value(), FlowEntryState.FAILED);

        InstalledState read = view.get(ID).get().value();

        assertEquals(6, read.switchRules().size());
        assertTrue(read.switchRules().stream().noneMatch(r -> r.rule().id().equals(lost.id())
                || r.rule().id().equals(rule(Fixtures.D1, 3).id())));
        assertTrue(read.switchRules().stream().anyMatch(r -> r.rule().id().equals(rule(Fixtures.D1, 1).id())));
        assertTrue(read.switchRules().stream().anyMatch(r -> r.rule().id().equals(rule(Fixtures.D1, 2).id())));
        assertTrue(read.unread().isEmpty());
    }

    @Test
    public void aDeviceThatCannotBeReadKeepsItsIdsThroughAWrite() {
        InstalledState st = installed(5, 3);
        view.put(ID, st);
        switches.unreadable(Fixtures.D2, new IllegalStateException("There is no master for available device"));

        InstalledState read = view.get(ID).get().value();
        assertEquals(5, read.switchRules().size());
        assertEquals(3, read.unread().get(Fixtures.D2).size());
        assertTrue(read.unreadWhy().get(Fixtures.D2).contains("no master"));
        view.put(ID, read.withSwitchRules(read.switchRules().subList(0, 2))); // e.g. a removal of the others

        switches.unreadable(Fixtures.D2, null);
        InstalledState back = view.get(ID).get().value();
        assertEquals(5, back.switchRules().size());
        assertEquals(3, back.switchRules().stream().filter(r -> r.rule().deviceId().equals(Fixtures.D2)).count());
    }

    /** A record an older version stored (the rules themselves) reads as their ids: the rules come from the switch. */
    @Test
    public void aStateStoredWithItsRulesReadsAsItsIds() {
        InstalledState st = installed(4, 2);
        raw.put(ID, st);
        assertEquals(st, view.get(ID).get().value());
        assertEquals(InstalledRecord.of(st), view.record(ID).get());
    }

    /**
     * What the store keeps for FW(4000)'s ~42k rules on one device, as before (the rules) and now (ids and roles).
     * Printed for BENCHMARKS.md; the bound keeps it ids-sized.
     */
    @Test
    public void storedBytesPerChainFallToTheIds() {
        int n = 42_000;
        List<InstalledRule> rules = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            rules.add(new InstalledRule(Role.OFFLOAD, rule(Fixtures.D1, i)));
        }
        InstalledState st = new InstalledState(ID, Optional.of(DeviceId.deviceId("metron:a")), rules, List.of(7L),
                true);
        int before = MetronSerializers.NAMESPACE.serialize(st).length;
        int after = MetronSerializers.NAMESPACE.serialize(InstalledRecord.of(st)).length;
        System.out.printf("installed state of %d rules: %d bytes stored as rules, %d as ids (%.1f vs %.1f per rule)%n",
                n, before, after, before / (double) n, after / (double) n);
        assertTrue(after + " bytes", after < 10 * n);
        assertEquals(InstalledRecord.of(st), MetronSerializers.NAMESPACE.deserialize(
                MetronSerializers.NAMESPACE.serialize(InstalledRecord.of(st))));
    }
}
