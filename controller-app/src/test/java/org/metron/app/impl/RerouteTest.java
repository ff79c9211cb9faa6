package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.spi.DeviceRole;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestSwitches;
import org.onosproject.net.DeviceId;

import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.onosproject.net.flow.DefaultFlowRule;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** A failed offload switch: the chain moves to the other path, its pipeline keeps running untouched. */
public class RerouteTest {
    private static final String S3 = TwoPathWorld.S3;
    private static final String S4 = TwoPathWorld.S4;

    @Test
    public void chainMovesToTheBackupPathWithoutTouchingThePipeline() {
        TwoPathWorld w = new TwoPathWorld();
        TestNetwork net = w.net;
        TestAgent agent = w.agent;
        TestSwitches switches = w.switches;
        ChainStore store = w.store;
        ChainManager m = w.manager;
        String json = TwoPathWorld.json("r");
        m.submit(json);
        ChainId id = ChainId.of("r");
        assertEquals(Fixtures.D2, m.placement(id).get().offloadDevice().get());
        assertEquals(4, switches.rules(Fixtures.D2).size());

        net.down(Fixtures.S2);
        assertEquals(List.of(id), m.reroute(Fixtures.D2));
        Placement p = m.placement(id).get();
        assertEquals(DeviceId.deviceId(S3), p.offloadDevice().get());
        assertEquals(0, switches.rules(Fixtures.D2).size());
        assertEquals(4, switches.rules(DeviceId.deviceId(S3)).size());
        List<RuleInfo> rules = m.rules(null);
        assertTrue(rules.stream().noneMatch(r -> r.rule().deviceId().equals(Fixtures.D2)));
        assertEquals(switches.total(), rules.size());
        // the server part was not redeployed: same tags, one DeployPipeline call in total
        assertEquals(1, agent.calls().stream().filter(c -> c.equals("DeployPipeline")).count());
        assertEquals(ChainState.ACTIVE, m.chain(id).get().state());

        // a chain stored by an earlier version carries other flow ids for the same table entries: rerouting it
        // again must keep s4's entries (the same in both plans), not delete them as stale
        InstalledState st = store.installed().get(id).get().value();
        List<InstalledRule> otherIds = new java.util.ArrayList<>();
        for (InstalledRule r : st.switchRules()) {
            otherIds.add(new InstalledRule(r.role(), DefaultFlowRule.builder().forDevice(r.rule().deviceId())
                    .forTable(r.rule().tableId()).withPriority(r.rule().priority()).withSelector(r.rule().selector())
                    .withTreatment(r.rule().treatment()).fromApp(Fixtures.APP).makePermanent().build()));
        }
        // the switches hold what that version installed: the same entries under its ids
        otherIds.stream().collect(java.util.stream.Collectors.groupingBy(r -> r.rule().deviceId(),
                java.util.stream.Collectors.mapping(InstalledRule::rule, java.util.stream.Collectors.toList())))
                .forEach((d, held) -> switches.install(d, held).join());
        store.installed().put(id, new InstalledState(id, st.server(), otherIds, st.nicRuleIds(), st.pipeline()));
        assertEquals(otherIds.size(), store.installed().get(id).get().value().switchRules().size());
        int s4Rules = switches.rules(DeviceId.deviceId(S4)).size();
        net.device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 1000).cable(Fixtures.S1, 2, Fixtures.S2, 1)
                .cable(Fixtures.S2, 2, S4, 1).down(S3);
        assertEquals(List.of(id), m.reroute(DeviceId.deviceId(S3)));
        assertEquals(s4Rules, switches.rules(DeviceId.deviceId(S4)).size());
        assertEquals(4, switches.rules(Fixtures.D2).size());
        assertEquals(0, switches.rules(DeviceId.deviceId(S3)).size());

        // nothing else uses s3's neighbour s1 rules: rerouting an unrelated device moves nothing
        assertTrue(m.reroute(DeviceId.deviceId("of:00000000000000aa")).isEmpty());
        m.remove(id);
        assertEquals(0, switches.total());
        assertTrue(agent.pipelines().isEmpty());
    }
}
