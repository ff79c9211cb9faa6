package org.metron.app.scaling;

import org.junit.Test;
import org.metron.agent.v1.FlowStateStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** Alerts from the agents' cumulative flow-state counters between two load reports. */
public class FlowStateAlertsTest {
    private static final DeviceId SERVER = DeviceId.deviceId("metron:10.0.0.1:50051");

    private static Stats report(long evicted, long refused, long growthFailures) {
        return Stats.newBuilder().addGroups(GroupStats.newBuilder().setPipelineId("web").setGroupId("g0")
                .addFlowState(FlowStateStats.newBuilder().setElement("rw").setKind("SynthRewriter").setFlows(16)
                        .setCapacity(16).setDeclaredCapacity(16).setEvicted(evicted).setRefused(refused)
                        .setGrowthFailures(growthFailures))).build();
    }

    @Test
    public void risingCountersAreReportedWithWhatRoseAndNothingElseIs() {
        FlowStateAlerts alerts = new FlowStateAlerts();
        assertTrue(alerts.observe(SERVER, report(0, 0, 0), report(0, 0, 0), 1).isEmpty());
        List<FlowStateAlert> a = alerts.observe(SERVER, report(0, 0, 0), report(3, 24, 0), 2);
        assertEquals(1, a.size());
        assertEquals(ChainId.of("web"), a.get(0).chain());
        assertEquals("g0", a.get(0).group());
        assertEquals("rw", a.get(0).element());
        assertEquals(3, a.get(0).evicted());
        assertEquals(24, a.get(0).refused());
        assertEquals("chain web group g0 element rw on " + SERVER + ": 3 flows evicted, 24 new flows refused "
                + "(16 of 16 flows held)", a.get(0).toString());
        assertTrue("unchanged counters: no alert", alerts.observe(SERVER, report(3, 24, 0), report(3, 24, 0), 3)
                .isEmpty());
        assertEquals("a restarted agent's counters count from zero", 5,
                alerts.observe(SERVER, report(3, 24, 0), report(0, 5, 1), 4).get(0).refused());
        assertEquals(2, alerts.recent(ChainId.of("web")).size());
        assertTrue(alerts.recent(ChainId.of("other")).isEmpty());
    }

    @Test
    public void onlyTheMostRecentAreKept() {
        FlowStateAlerts alerts = new FlowStateAlerts();
        for (int i = 0; i < FlowStateAlerts.KEPT + 10; i++) {
            alerts.observe(SERVER, report(0, i, 0), report(0, i + 1, 0), i);
        }
        assertEquals(FlowStateAlerts.KEPT, alerts.recent().size());
        assertEquals(10, alerts.recent().get(0).atMs());
    }
}
