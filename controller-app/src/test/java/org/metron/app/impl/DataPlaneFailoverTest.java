package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.provider.ProviderId;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * A chain offloaded at its ingress switch s1, whose server s3 is reached directly (s1:2 - s3:1) or over s2 (s1:3 -
 * s2:1, s2:2 - s3:2): the direct link's backup is armed as a fast-failover group on s1 with s2's rules in place,
 * the controller makes it the chain's path after the cut, and nothing armed outlives the chain.
 */
public class DataPlaneFailoverTest {
    private static final String S3 = "of:0000000000000003";
    private static final DeviceId D1 = DeviceId.deviceId(Fixtures.S1);
    private static final DeviceId D3 = DeviceId.deviceId(S3);

    private final TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OPENFLOW_SWITCH, 1000)
            .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 1000).device(S3, DeviceRole.OPENFLOW_SWITCH, 1000)
            .cable(Fixtures.S1, 2, S3, 1).cable(Fixtures.S1, 3, Fixtures.S2, 1).cable(Fixtures.S2, 2, S3, 2);
    private final TestAgent agent = new TestAgent("a:1", 4, 0.1).nic("eth0", true, 64);
    private final TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:a"), agent,
            Map.of("eth0", ConnectPoint.deviceConnectPoint(S3 + "/10"))));
    private final TestSwitches switches = new TestSwitches().withFailoverGroups();
    /** The durable maps: what a restarted instance finds again. */
    private final LocalStoreFactory stores = new LocalStoreFactory();
    private final ChainStore store = new ChainStore(stores, switches);
    private final ChainManager m;

    public DataPlaneFailoverTest() {
        m = instance(store);
    }

    /** A controller instance over the stores and switches (a second one: the host restarted). */
    private ChainManager instance(ChainStore store) {
        return instance(store, new SingleInstanceLeadership(), Duration.ofSeconds(2));
    }

    private ChainManager instance(ChainStore store, org.metron.app.spi.Leadership leadership, Duration t) {
        return new ChainManager(store, servers, switches, leadership,
                new PlacementEngine(servers, net, switches, new Random(1), t), new RulePlanner(Fixtures.APP, net),
                new Deployer(switches, t), t, Fixtures.synthesis());
    }

    /** A node of a cluster over the same stores and switches. */
    private ChainManager node(org.metron.app.testing.TestLeadership cluster, String name, Duration t) {
        return instance(new ChainStore(stores, switches), cluster.instance(name), t);
    }

    private static Set<Long> outputs(List<FlowRule> rules) {
        return rules.stream().flatMap(r -> r.treatment().allInstructions().stream())
                .filter(i -> i instanceof Instructions.OutputInstruction)
                .map(i -> ((Instructions.OutputInstruction) i).port().toLong()).collect(Collectors.toSet());
    }

    private static Set<Integer> groupsSentTo(List<FlowRule> rules) {
        return rules.stream().flatMap(r -> r.treatment().allInstructions().stream())
                .filter(i -> i instanceof Instructions.GroupInstruction)
                .map(i -> ((Instructions.GroupInstruction) i).groupId().id()).collect(Collectors.toSet());
    }

    private ChainId deploy() {
        m.submit(Fixtures.chainJson("ff").replace(Fixtures.S1 + "/3", S3 + "/20"));
        ChainId id = ChainId.of("ff");
        assertEquals(D1, m.placement(id).get().offloadDevice().get());
        // read in its plain form (the switch may hold it redirected to a group already: backups are armed meanwhile)
        assertEquals("the direct link is the path", Set.of(2L), outputs(store.installed().get(id).get().value()
                .switchRules().stream().map(r -> r.rule()).filter(r -> r.deviceId().equals(D1))
                .collect(Collectors.toList())));
        m.awaitBackups();
        return id;
    }

    @Test
    public void theDirectLinksBackupIsArmedOnS1AndBecomesThePathAfterTheCut() {
        ChainId id = deploy();
        List<FailoverGroup> groups = switches.groups(D1);
        assertFalse("s1 holds the direct link's backup as groups", groups.isEmpty());
        for (FailoverGroup g : groups) {
            assertEquals(List.of(PortNumber.portNumber(2), PortNumber.portNumber(3)),
                    g.buckets().stream().map(FailoverGroup.Bucket::watchPort).collect(Collectors.toList()));
        }
        // s1 no longer sends out port 2 itself: its server-bound rules send to the groups
        assertEquals(Set.of(), outputs(switches.rules(D1)));
        assertEquals(groups.stream().map(FailoverGroup::id).collect(Collectors.toSet()),
                groupsSentTo(switches.rules(D1)));
        assertFalse("s2 carries the backup's rules before any failure", switches.rules(Fixtures.D2).isEmpty());
        int s2Rules = switches.rules(Fixtures.D2).size();
        int s3Rules = switches.rules(D3).size();

        // the cut: the controller moves the chain to the backup (the path the groups already switched to)
        net.cut(Fixtures.S1, 2);
        // a refresh that runs before the controller hears of the cut keeps what is armed (the switch may be on it)
        m.refreshBackups(id);
        m.awaitBackups();
        assertEquals(groups, switches.groups(D1));
        Link cut = DefaultLink.builder().providerId(new ProviderId("test", "metron"))
                .src(ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/2"))
                .dst(ConnectPoint.deviceConnectPoint(S3 + "/1"))
                .type(Link.Type.DIRECT).build();
        assertEquals(List.of(id), m.rerouteLink(cut, "link cut"));
        assertTrue(m.chain(id).get().reason(), m.chain(id).get().reason().contains("backup precomputed for the link"));
        // the cut's other direction (ONOS removes both links of a port; the peer's port goes down too): the chain
        // no longer sends into the link, so it stays on its backup rather than being rerouted around s1
        Link reverse = DefaultLink.builder().providerId(cut.providerId()).src(cut.dst()).dst(cut.src())
                .type(Link.Type.DIRECT).build();
        assertEquals(List.of(), m.rerouteLink(reverse, "link cut"));
        assertTrue(m.chain(id).get().reason(), m.chain(id).get().reason().contains("backup precomputed for the link"));
        assertEquals(Set.of(3L), outputs(switches.rules(D1)));
        assertEquals("the backup's rules were in place already", s2Rules, switches.rules(Fixtures.D2).size());
        m.awaitBackups();
        // no other path is left to protect the new one: the groups are gone, the plain rules stay
        assertEquals(List.of(), switches.groups(D1));
        assertEquals(Set.of(3L), outputs(switches.rules(D1)));
        assertTrue(s3Rules >= switches.rules(D3).size());

        m.remove(id);
        assertEquals(0, switches.total());
    }

    private static Link cutLink() {
        return DefaultLink.builder().providerId(new ProviderId("test", "metron"))
                .src(ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/2"))
                .dst(ConnectPoint.deviceConnectPoint(S3 + "/1"))
                .type(Link.Type.DIRECT).build();
    }

    @Test
    public void aRestartedInstanceAdoptsTheArmedGroupsAndDeletesTheStaleOnes() {
        ChainId id = deploy();
        List<FailoverGroup> armed = switches.groups(D1);
        assertFalse(armed.isEmpty());
        // what an earlier run may leave besides: a group no rule sends to (a crash between adding a chain's groups
        // and redirecting its rules), and one of the chain's rules on a group with another backup (out of s1/4)
        FailoverGroup first = armed.get(0);
        FailoverGroup orphan = new FailoverGroup(D1, 7, first.buckets());
        FailoverGroup stale = new FailoverGroup(D1, 8, List.of(first.buckets().get(0), new FailoverGroup.Bucket(
                PortNumber.portNumber(4), org.onosproject.net.flow.DefaultTrafficTreatment.builder()
                .setOutput(PortNumber.portNumber(4)).build())));
        switches.addGroups(D1, List.of(orphan, stale)).join();
        FlowRule onFirst = switches.rules(D1).stream().filter(r -> groupsSentTo(List.of(r)).contains(first.id()))
                .findFirst().orElseThrow();
        switches.install(D1, List.of(FailoverGroupPlanner.toGroup(onFirst, stale.id()))).join();
        int rulesOnS1 = switches.rules(D1).size();

        // the host restarts: a new instance over the same stores and switches, nothing of the arming in memory
        ChainStore again = new ChainStore(stores, switches);
        ChainManager restarted = instance(again);
        // its read of the chain's rules is their plain form: the groups' first buckets, read back from s1
        assertEquals(Set.of(2L), outputs(again.installed().get(id).get().value().switchRules().stream()
                .map(r -> r.rule()).filter(r -> r.deviceId().equals(D1)).collect(Collectors.toList())));
        int adds = switches.log().size();
        String done = restarted.reconcile(id); // what taking the chain over does (ChainOwnership)
        assertTrue(done, done.contains("re-armed"));
        restarted.awaitBackups();

        List<FailoverGroup> now = switches.groups(D1);
        assertEquals("s1 holds exactly the groups its rules send to", now.stream().map(FailoverGroup::id)
                .collect(Collectors.toSet()), groupsSentTo(switches.rules(D1)));
        assertFalse("the orphan is gone", now.contains(orphan));
        assertFalse("the stale group is gone", now.contains(stale));
        assertFalse("the group no rule sends to any more is gone", now.contains(first));
        assertTrue("the groups the chain's rules still send to are adopted as they are, same ids: " + armed
                + " now " + now, now.containsAll(armed.subList(1, armed.size())));
        assertEquals(armed.size(), now.size());
        assertEquals("one group added: for the rule that was on the stale one", List.of("addGroups " + D1 + " 1"),
                switches.log().subList(adds, switches.log().size()).stream().filter(l -> l.startsWith("addGroups"))
                        .collect(Collectors.toList()));
        assertEquals("no rule was lost with a deleted group", rulesOnS1, switches.rules(D1).size());
        assertEquals(Set.of(), outputs(switches.rules(D1)));

        // and the re-armed backup is what the restarted instance moves the chain to after a cut
        net.cut(Fixtures.S1, 2);
        assertEquals(List.of(id), restarted.rerouteLink(cutLink(), "link cut"));
        assertTrue(restarted.chain(id).get().reason(),
                restarted.chain(id).get().reason().contains("backup precomputed for the link"));
        assertEquals(Set.of(3L), outputs(switches.rules(D1)));
        restarted.remove(id);
        assertEquals(List.of(), switches.groups(D1));
        assertEquals(0, switches.total());
    }

    @Test
    public void aNodeTakingTheChainOverAdoptsItsGroupsAndDeletesAnOrphanOnlyAfterItsGrace() throws Exception {
        // two nodes of a cluster over the same stores and switches; a step timeout of 250 ms: a 1 s grace
        org.metron.app.testing.TestLeadership cluster = new org.metron.app.testing.TestLeadership();
        Duration t = Duration.ofMillis(250);
        ChainManager a = node(cluster, "a", t);
        a.submit(Fixtures.chainJson("ff").replace(Fixtures.S1 + "/3", S3 + "/20"));
        ChainId id = ChainId.of("ff");
        a.awaitBackups();
        List<FailoverGroup> armed = switches.groups(D1);
        assertFalse(armed.isEmpty());
        ChainManager b = node(cluster, "b", t);
        cluster.instance("b").join(id);
        FailoverGroup orphan = new FailoverGroup(D1, 7, armed.get(0).buckets());
        switches.addGroups(D1, List.of(orphan)).join();

        cluster.stop("a"); // b leads now
        assertTrue(b.unarmed(id));
        assertTrue(b.reconcile(id).contains("re-armed"));
        b.awaitBackups();
        assertFalse(b.unarmed(id));
        assertTrue("a's groups adopted: " + switches.groups(D1), switches.groups(D1).containsAll(armed));
        assertTrue("an orphan may be another node's arming: kept for now", switches.groups(D1).contains(orphan));
        Thread.sleep(1100);
        b.refreshBackups(id);
        b.awaitBackups();
        assertEquals("unnamed past its grace: deleted", Set.copyOf(armed), Set.copyOf(switches.groups(D1)));
        b.remove(id);
        assertEquals(List.of(), switches.groups(D1));
    }

    @Test
    public void aChainRemovedBeforeARestartedInstanceReArmedItTakesItsGroupsAndBackupRulesAway() {
        ChainId id = deploy();
        assertFalse(switches.groups(D1).isEmpty());
        assertFalse("the backup's rules are pre-installed on s2", switches.rules(Fixtures.D2).isEmpty());
        // the host restarts and the chain is deleted before its first sweep re-arms it
        ChainManager restarted = instance(new ChainStore(stores, switches));
        assertTrue(restarted.unarmed(id));
        restarted.remove(id);
        assertTrue(restarted.chain(id).isEmpty());
        assertEquals("its groups went with it", List.of(), switches.groups(D1));
        assertEquals("nothing of it is left: its backup's rules on s2 and s3 neither", 0, switches.total());
    }

    @Test
    public void backupRulesOfAnEarlierRunThatTheNewArmingDoesNotInstallAreRemoved() {
        ChainId id = deploy();
        assertFalse(switches.groups(D1).isEmpty());
        assertFalse("the backup's rules are pre-installed on s2", switches.rules(Fixtures.D2).isEmpty());
        // while the host is down the s2-s3 cable goes: the direct link has no backup any more, so the new arming
        // installs none of the earlier run's backup rules (s2 still answers)
        net.cut(Fixtures.S2, 2);
        ChainStore again = new ChainStore(stores, switches);
        ChainManager restarted = instance(again);
        assertTrue(restarted.reconcile(id).contains("re-armed"));
        restarted.awaitBackups();
        assertEquals("nothing left to arm: no group", List.of(), switches.groups(D1));
        assertEquals(Set.of(2L), outputs(switches.rules(D1)));
        assertEquals("the earlier run's backup rules on s2 are gone", List.of(), switches.rules(Fixtures.D2));
        assertEquals("the switches hold the chain's rules and nothing else",
                again.installed().get(id).get().value().switchRules().size(), switches.total());
        restarted.remove(id);
        assertEquals(0, switches.total());
    }

    @Test
    public void aChainComingBackToANodeThatLedItBeforeIsReArmedThere() throws Exception {
        org.metron.app.testing.TestLeadership cluster = new org.metron.app.testing.TestLeadership();
        Duration t = Duration.ofSeconds(2);
        ChainManager a = node(cluster, "a", t);
        ChainManager b = node(cluster, "b", t);
        // the sweeps are left to the test (one at start); gains are followed as they come
        ChainOwnership ownsA = a.ownership().start(Duration.ofMinutes(10));
        ChainOwnership ownsB = b.ownership().start(Duration.ofMinutes(10));
        try {
            a.submit(Fixtures.chainJson("ff").replace(Fixtures.S1 + "/3", S3 + "/20"));
            ChainId id = ChainId.of("ff");
            a.awaitBackups();
            assertFalse(switches.groups(D1).isEmpty());
            cluster.instance("b").join(id);
            cluster.instance("a").release(id); // b leads now; a runs again, after b
            cluster.instance("a").join(id);
            await(() -> !b.unarmed(id));
            b.awaitBackups();

            // while b leads, the direct link is cut and comes back: b moves the chain over s2 and arms the s1-s2
            // link's backup (the direct link again), which a never saw
            net.cut(Fixtures.S1, 2);
            assertEquals(List.of(id), b.rerouteLink(cutLink(), "link cut"));
            b.awaitBackups();
            net.cable(Fixtures.S1, 2, S3, 1);
            b.refreshBackups(id);
            b.awaitBackups();
            List<FailoverGroup> armedByB = switches.groups(D1);
            assertFalse(armedByB.isEmpty());
            assertEquals(List.of(PortNumber.portNumber(3), PortNumber.portNumber(2)), armedByB.get(0).buckets()
                    .stream().map(FailoverGroup.Bucket::watchPort).collect(Collectors.toList()));

            cluster.instance("b").release(id); // the chain comes back to a
            await(() -> !a.unarmed(id));
            a.awaitBackups();
            assertEquals("b's groups adopted as they are", Set.copyOf(armedByB), Set.copyOf(switches.groups(D1)));
            net.cut(Fixtures.S1, 3);
            Link s1s2 = DefaultLink.builder().providerId(new ProviderId("test", "metron"))
                    .src(ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3"))
                    .dst(ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/1")).type(Link.Type.DIRECT).build();
            assertEquals(List.of(id), a.rerouteLink(s1s2, "link cut"));
            assertTrue("a moves the chain onto the backup it re-armed at its gain: " + a.chain(id).get().reason(),
                    a.chain(id).get().reason().contains("backup precomputed for the link"));
            assertEquals(Set.of(2L), outputs(switches.rules(D1)));
        } finally {
            ownsA.close();
            ownsB.close();
            a.close();
            b.close();
        }
    }

    private static void await(java.util.function.BooleanSupplier done) throws InterruptedException {
        long end = System.currentTimeMillis() + 10_000;
        while (!done.getAsBoolean() && System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        assertTrue("not done within 10 s", done.getAsBoolean());
    }

    @Test
    public void aMoveThatFailsAfterTheCutIsTriedAgainAndSaysSo() throws InterruptedException {
        ChainId id = deploy();
        assertFalse(switches.groups(D1).isEmpty());
        net.cut(Fixtures.S1, 2);
        switches.reject(D1); // the move onto the backup installs s1's plain rule: refused
        assertEquals(List.of(), m.rerouteLink(cutLink(), "link cut"));
        String reason = m.chain(id).get().reason();
        assertTrue(reason, reason.contains("not moved") && reason.contains("next try in"));
        switches.accept(D1);
        long end = System.currentTimeMillis() + 10_000;
        while (!m.chain(id).get().reason().contains("backup precomputed for the link")
                && System.currentTimeMillis() < end) {
            Thread.sleep(50);
        }
        assertTrue(m.chain(id).get().reason(), m.chain(id).get().reason().contains("backup precomputed for the link"));
        assertTrue(m.chain(id).get().reason(), m.chain(id).get().reason().contains("try 2"));
        m.awaitBackups();
        // moved and its backups refreshed (nothing is left to protect the new path: no group)
        assertEquals(Set.of(3L), outputs(switches.rules(D1)));
        assertEquals(List.of(), switches.groups(D1));
    }

    @Test
    public void removingAnArmedChainTakesItsGroupsAndPreinstalledRulesAway() {
        ChainId id = deploy();
        assertFalse(switches.groups(D1).isEmpty());
        m.remove(id);
        assertEquals(List.of(), switches.groups(D1));
        assertEquals(0, switches.total());
    }

    @Test
    public void aSwitchRefusingTheBackupLeavesThePlainPathAndNoGroup() {
        switches.reject(Fixtures.D2); // s2 is off the chain's path: only the backup's pre-installed rules go there
        ChainId id = deploy();
        assertEquals(List.of(), switches.groups(D1));
        assertEquals(Set.of(2L), outputs(switches.rules(D1)));
        assertTrue("the groups added before the refusal were taken out",
                switches.log().stream().anyMatch(l -> l.startsWith("removeGroups " + D1)));
        switches.accept(Fixtures.D2);
        m.refreshBackups(id);
        m.awaitBackups();
        assertFalse("armed once s2 takes rules again", switches.groups(D1).isEmpty());
    }
}
