package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.store.FailoverBackup;
import org.metron.app.store.InstalledRule;
import org.metron.app.testing.Fixtures;
import org.onlab.packet.MacAddress;
import org.onosproject.core.GroupId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.provider.ProviderId;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * Planning of fast-failover groups from a chain's rules and its link backups, on paper Fig. 5's shape: s1 reaches s3
 * directly (s1:2 - s3:2) or over s2 (s1:3 - s2:1, s2:2 - s3:3); the server hangs off s3:4.
 */
public class FailoverGroupPlannerTest {
    private static final DeviceId S1 = DeviceId.deviceId("of:0000000000000001");
    private static final DeviceId S2 = DeviceId.deviceId("of:0000000000000002");
    private static final DeviceId S3 = DeviceId.deviceId("of:0000000000000003");
    private static final Link S1_S3 = link(S1, 2, S3, 2);
    private static final Link S1_S2 = link(S1, 3, S2, 1);
    private static final Placement P = new Placement(org.metron.app.api.ChainId.of("ff"), Optional.empty(), "eth0",
            "eth0", Optional.of(S1), "ovs", List.of());

    private static Link link(DeviceId a, long pa, DeviceId b, long pb) {
        return DefaultLink.builder().providerId(new ProviderId("test", "metron"))
                .src(new ConnectPoint(a, PortNumber.portNumber(pa))).dst(new ConnectPoint(b, PortNumber.portNumber(pb)))
                .type(Link.Type.DIRECT).build();
    }

    /** A rule on {@code d} matching {@code inPort} and {@code mac}, tagging it and sending it out {@code out}. */
    private static InstalledRule rule(DeviceId d, long inPort, String mac, long out) {
        TrafficTreatment t = DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:00:00:01"))
                .setOutput(PortNumber.portNumber(out)).build();
        FlowRule r = DefaultFlowRule.builder().forDevice(d).forTable(0).withPriority(100).fromApp(Fixtures.APP)
                .withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(inPort))
                        .matchEthDst(MacAddress.valueOf(mac)).build())
                .withTreatment(t).makePermanent().build();
        return new InstalledRule(RuleInfo.Role.OFFLOAD, r);
    }

    private static LinkBackup backup(Link l, InstalledRule... rules) {
        return new LinkBackup(l, new FailoverBackup(l.dst().deviceId(), P, P, List.of(rules)));
    }

    private static final String MAC = "02:00:00:00:00:02";
    /** The chain today: s1 sends to s3 directly, s3 to the server. */
    private static final List<InstalledRule> PRIMARY = List.of(rule(S1, 1, MAC, 2), rule(S3, 2, MAC, 4));

    private static FailoverGroupPlanner.Plan plan(List<LinkBackup> backups) {
        AtomicInteger ids = new AtomicInteger(100);
        return FailoverGroupPlanner.plan(PRIMARY, backups, (d, buckets) -> ids.getAndIncrement());
    }

    @Test
    public void theLinksEndGetsAGroupAndTheBackupsOtherRulesArePreinstalled() {
        // over s2: s1 sends out 3 instead of 2 (same entry), s2 forwards, s3 takes it on its port 3 (a new entry)
        FailoverGroupPlanner.Plan p = plan(List.of(backup(S1_S3, rule(S1, 1, MAC, 3), rule(S2, 1, MAC, 2),
                rule(S3, 3, MAC, 4))));
        assertTrue(p.notArmed().toString(), p.notArmed().isEmpty());
        FailoverGroup g = p.groups().get(S1).get(0);
        assertEquals(100, g.id());
        assertEquals(List.of(PortNumber.portNumber(2), PortNumber.portNumber(3)),
                List.of(g.buckets().get(0).watchPort(), g.buckets().get(1).watchPort()));
        assertEquals(PRIMARY.get(0).rule().treatment(), g.buckets().get(0).treatment());
        assertEquals(rule(S1, 1, MAC, 3).rule().treatment(), g.buckets().get(1).treatment());
        // the redirected rule keeps its entry and id, and sends to the group
        FlowRule redirected = p.redirected().get(S1).get(0);
        assertEquals(Deployer.entry(PRIMARY.get(0).rule()), Deployer.entry(redirected));
        assertEquals(PRIMARY.get(0).rule().id(), redirected.id());
        assertEquals(DefaultTrafficTreatment.builder().group(GroupId.valueOf(100)).build(), redirected.treatment());
        assertEquals(Map.of(S2, List.of(rule(S2, 1, MAC, 2).rule()), S3, List.of(rule(S3, 3, MAC, 4).rule())),
                p.preinstalled());
        assertEquals(List.of(S1), List.copyOf(p.redirected().keySet()));
    }

    @Test
    public void aBackupChangingARuleAwayFromTheLinkIsNotArmed() {
        // s3's existing rule would send elsewhere: no group can make that switch over, so nothing is armed
        FailoverGroupPlanner.Plan p = plan(List.of(backup(S1_S3, rule(S1, 1, MAC, 3), rule(S2, 1, MAC, 2),
                rule(S3, 2, MAC, 5))));
        assertTrue(p.isEmpty());
        assertEquals(1, p.notArmed().size());
        assertTrue(p.notArmed().get(0), p.notArmed().get(0).contains("beyond where the link's end sends it"));
    }

    @Test
    public void aBackupWithNothingToSwitchOverIsNotPreinstalled() {
        // the s1-s2 link carries none of the chain's traffic: its backup changes nothing at its ends
        FailoverGroupPlanner.Plan p = plan(List.of(backup(S1_S2, rule(S1, 1, MAC, 2), rule(S3, 2, MAC, 4),
                rule(S2, 7, MAC, 1))));
        assertTrue(p.isEmpty());
        assertTrue(p.notArmed().get(0), p.notArmed().get(0).contains("no rule at the link's ends"));
    }

    @Test
    public void backupsWhosePreinstalledRulesClashAreArmedFirstComeOnly() {
        Link s3s1 = link(S3, 2, S1, 2);
        LinkBackup first = backup(S1_S3, rule(S1, 1, MAC, 3), rule(S2, 1, MAC, 2), rule(S3, 3, MAC, 4));
        // another backup for the same link seen from s3 needing s2's entry to send elsewhere
        LinkBackup second = backup(s3s1, rule(S3, 2, MAC, 4), rule(S1, 1, MAC, 2), rule(S2, 1, MAC, 9));
        FailoverGroupPlanner.Plan p = plan(List.of(first, second));
        assertEquals(1, p.groups().get(S1).size());
        assertEquals(1, p.notArmed().size());
        assertTrue(p.notArmed().get(0), p.notArmed().get(0).contains("clashes with another backup's"));
    }

    @Test
    public void onlyActionsAndOneOutputFitABucket() {
        assertEquals(Optional.of(PortNumber.portNumber(2)),
                FailoverGroupPlanner.plainOutput(PRIMARY.get(0).rule().treatment()));
        assertEquals(Optional.empty(), FailoverGroupPlanner.plainOutput(DefaultTrafficTreatment.builder()
                .setOutput(PortNumber.portNumber(2)).transition(1).build()));
        assertEquals(Optional.empty(), FailoverGroupPlanner.plainOutput(DefaultTrafficTreatment.builder()
                .setOutput(PortNumber.portNumber(2)).setOutput(PortNumber.portNumber(3)).build()));
        assertEquals(Optional.empty(), FailoverGroupPlanner.plainOutput(DefaultTrafficTreatment.builder()
                .setOutput(PortNumber.portNumber(2)).setEthDst(MacAddress.valueOf(MAC)).build()));
        assertEquals(Optional.empty(), FailoverGroupPlanner.plainOutput(DefaultTrafficTreatment.emptyTreatment()));
    }
}
