package org.metron.embedded.contract;

import org.junit.After;
import org.junit.Test;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.SwitchProgrammer;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.IpAddress;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * What the controller core may assume of {@link SwitchProgrammer} (spi/SwitchProgrammer), asked of ONOS's
 * implementation over its flow-rule service and of the embedded host's over OpenFlow: {@code entries} answers the
 * rules installed, by flow id, with their match and actions (what a chain's installed state is read from), a
 * removal takes them away and a removal of absent rules is no error, staged rules are live only once committed
 * (with their removals, in one step), and a rule for another device is refused. A device the network does not
 * know (ONOS: never reported; the embedded host: never connected) reads as ONOS's flow-rule and group stores answer
 * for it (no entries, no rules, no groups, nothing to delete) and takes no rule write (ONOS fails a batch for a
 * device without master: its rules may still be somewhere, so a removal must not report them gone). Empty batches
 * are no-ops; an install the device refuses leaves none of its rules.
 */
public abstract class SwitchProgrammerContract {
    private static final long WAIT_S = 10;
    private final SwitchProgrammer switches = programmer();

    /** A fresh implementation whose device {@link #device()} is up with no Metron rule. */
    protected abstract SwitchProgrammer programmer();

    /** The device it programs. */
    protected abstract DeviceId device();

    /** The application the rules are installed for (the implementation's own). */
    protected abstract ApplicationId app();

    /**
     * {@code good} as a batch the device refuses as a whole: the implementation either makes the device refuse
     * every add from now on or adds a rule the device cannot take (what makes the install's compensation run).
     */
    protected abstract List<FlowRule> refusedBatch(List<FlowRule> good) throws Exception;

    /** Stops what {@link #programmer()} started. */
    protected void stop() {
    }

    @After
    public void tearDown() {
        stop();
    }

    private FlowRule rule(DeviceId d, int i) {
        return DefaultFlowRule.builder().forDevice(d).forTable(0).withPriority(1000 + i).fromApp(app())
                .makePermanent().withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                        .matchEthType(Ethernet.TYPE_IPV4).matchIPProtocol(IPv4.PROTOCOL_TCP)
                        .matchIPSrc(IpPrefix.valueOf("10.1.0." + i + "/32"))
                        .matchTcpDstMasked(TpPort.tpPort(1024), TpPort.tpPort(0xfc00)).build())
                .withTreatment(DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:01:00:07"))
                        .setOutput(PortNumber.portNumber(2)).build()).build();
    }

    private List<FlowRule> rules(int from, int to) {
        return java.util.stream.IntStream.range(from, to).mapToObj(i -> rule(device(), i))
                .collect(Collectors.toList());
    }

    private static <T> T done(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(WAIT_S, TimeUnit.SECONDS);
    }

    /** Metron's entries the device holds (installed or being installed), by flow id. */
    private Map<Long, FlowEntry> entries() {
        Map<Long, FlowEntry> out = new HashMap<>();
        for (FlowEntry e : switches.entries(device())) {
            if (e.state() == FlowEntry.FlowEntryState.ADDED || e.state() == FlowEntry.FlowEntryState.PENDING_ADD) {
                out.put(e.id().value(), e);
            }
        }
        return out;
    }

    private static java.util.Set<Long> ids(List<FlowRule> rules) {
        return rules.stream().map(r -> r.id().value()).collect(Collectors.toSet());
    }

    private FailoverGroup group(int id, int primary, int backup) {
        java.util.function.IntFunction<FailoverGroup.Bucket> bucket = port -> new FailoverGroup.Bucket(
                PortNumber.portNumber(port), DefaultTrafficTreatment.builder()
                .setEthDst(MacAddress.valueOf("02:4d:00:01:00:0" + port)).setIpDst(IpAddress.valueOf("10.9.0." + port))
                .setUdpDst(TpPort.tpPort(5000 + port)).setOutput(PortNumber.portNumber(port)).build());
        return new FailoverGroup(device(), id, List.of(bucket.apply(primary), bucket.apply(backup)));
    }

    /**
     * What a restarted or new owner of a chain reads back (docs/failover.md#restarts-and-takeovers): the groups
     * added, equal to what was added (id, watch ports, each bucket's actions as the treatment they came from), and
     * no longer once deleted.
     */
    @Test
    public void failoverGroupsAreReadBackAsAddedAndNotOnceDeleted() throws Exception {
        assertTrue(switches.supportsFailoverGroups());
        FailoverGroup a = group(41, 2, 3);
        FailoverGroup b = group(42, 3, 2);
        done(switches.addGroups(device(), List.of(a, b)));
        assertEquals(java.util.Set.of(a, b), java.util.Set.copyOf(done(switches.readGroups(device()))));
        done(switches.removeGroups(device(), List.of(a)));
        assertEquals(List.of(b), done(switches.readGroups(device())));
        done(switches.removeGroups(device(), List.of(a, b))); // an absent one is no error
        assertEquals(List.of(), done(switches.readGroups(device())));
    }

    @Test
    public void installedRulesAreEntriesByIdWithTheirMatchAndActions() throws Exception {
        List<FlowRule> rules = rules(0, 3);
        done(switches.install(device(), rules));
        Map<Long, FlowEntry> read = entries();
        assertEquals(ids(rules), read.keySet());
        for (FlowRule r : rules) {
            FlowEntry e = read.get(r.id().value());
            assertEquals(r.selector(), e.selector());
            assertEquals(r.treatment(), e.treatment());
            assertEquals(r.priority(), e.priority());
            assertEquals(device(), e.deviceId());
            assertEquals(app().id(), e.appId());
        }
        assertTrue("the device counts them", switches.ruleCount(device()) >= rules.size());
    }

    @Test
    public void aRemovalTakesRulesAwayAndRemovingAbsentRulesIsNoError() throws Exception {
        List<FlowRule> rules = rules(0, 3);
        done(switches.install(device(), rules));
        done(switches.remove(device(), rules.subList(0, 1)));
        assertEquals(ids(rules.subList(1, 3)), entries().keySet());
        done(switches.remove(device(), rules.subList(0, 1))); // again: absent
        done(switches.remove(device(), rules(7, 9)));          // never installed
        assertEquals(ids(rules.subList(1, 3)), entries().keySet());
    }

    @Test
    public void stagedRulesAreLiveOnlyOnceCommittedAndDiscardedOnesNever() throws Exception {
        SwitchProgrammer.Staged kept = done(switches.stage(device(), rules(0, 2)));
        SwitchProgrammer.Staged dropped = done(switches.stage(device(), rules(2, 4)));
        assertTrue(entries().isEmpty());
        done(kept.commit());
        done(dropped.discard());
        assertEquals(ids(rules(0, 2)), entries().keySet());
    }

    @Test
    public void aStagedUpdateAddsAndRemovesInItsCommit() throws Exception {
        done(switches.install(device(), rules(0, 3)));
        SwitchProgrammer.Staged update = done(switches.stage(device(), rules(3, 5), rules(0, 2)));
        assertEquals(ids(rules(0, 3)), entries().keySet());
        done(update.commit());
        assertEquals(ids(List.of(rule(device(), 2), rule(device(), 3), rule(device(), 4))), entries().keySet());
    }

    @Test
    public void aRuleForAnotherDeviceIsRefusedAndNothingOfItsBatchInstalled() throws Exception {
        DeviceId other = DeviceId.deviceId("of:00000000000000ee");
        try {
            done(switches.install(device(), List.of(rule(device(), 0), rule(other, 1))));
            fail("a rule for " + other + " installed on " + device());
        } catch (java.util.concurrent.ExecutionException | CompletionException | IllegalArgumentException e) {
            // refused: as a failed future or at the call
        }
        assertTrue(entries().isEmpty());
    }

    /** Whether the future fails (within the test's wait; a future that never ends fails the test). */
    private static boolean fails(java.util.concurrent.CompletableFuture<?> f) throws Exception {
        try {
            done(f);
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return true;
        }
    }

    @Test
    public void aDeviceTheNetworkDoesNotKnowHasNoRulesNoGroupsAndNothingToDelete() throws Exception {
        DeviceId unknown = DeviceId.deviceId("of:00000000000000ee");
        assertEquals(List.of(), List.copyOf(switches.entries(unknown)));
        assertEquals(0, switches.ruleCount(unknown));
        assertEquals(List.of(), done(switches.readGroups(unknown)));
        done(switches.removeGroups(unknown, List.of(new FailoverGroup(unknown, 41, group(41, 2, 3).buckets()))));
    }

    @Test
    public void aDeviceTheNetworkDoesNotKnowTakesNoRuleWrite() throws Exception {
        DeviceId unknown = DeviceId.deviceId("of:00000000000000ee");
        List<FlowRule> there = List.of(rule(unknown, 0), rule(unknown, 1));
        assertTrue("install on " + unknown, fails(switches.install(unknown, there)));
        assertTrue("removal from " + unknown + " reported done", fails(switches.remove(unknown, there)));
        java.util.concurrent.CompletableFuture<SwitchProgrammer.Staged> staged = switches.stage(unknown, there);
        assertTrue("staged and committed on " + unknown, fails(staged) || fails(done(staged).commit()));
        assertTrue(entries().isEmpty());
    }

    @Test
    public void emptyBatchesAreNoOps() throws Exception {
        done(switches.install(device(), rules(0, 2)));
        done(switches.install(device(), List.of()));
        done(switches.remove(device(), List.of()));
        done(done(switches.stage(device(), List.of(), List.of())).commit());
        done(done(switches.stage(device(), List.of())).discard());
        done(switches.addGroups(device(), List.of()));
        done(switches.removeGroups(device(), List.of()));
        assertEquals(ids(rules(0, 2)), entries().keySet());
        assertEquals(List.of(), done(switches.readGroups(device())));
    }

    @Test
    public void installingTheSameRulesAgainKeepsOneEntryEachAndADiscardedRemovalRemovesNothing() throws Exception {
        done(switches.install(device(), rules(0, 3)));
        done(switches.install(device(), rules(1, 3)));
        assertEquals(ids(rules(0, 3)), entries().keySet());
        assertEquals(3, switches.entries(device()).size());
        done(done(switches.stage(device(), rules(3, 4), rules(0, 2))).discard());
        assertEquals(ids(rules(0, 3)), entries().keySet());
    }

    @Test
    public void aBatchTheDeviceRefusesLeavesNoneOfItsRulesAndKeepsTheOthers() throws Exception {
        done(switches.install(device(), rules(0, 2)));
        List<FlowRule> refused = refusedBatch(rules(2, 5));
        assertTrue("a refused install completed", fails(switches.install(device(), refused)));
        java.util.concurrent.CompletableFuture<SwitchProgrammer.Staged> staged = switches.stage(device(), refused);
        assertTrue("a refused stage committed", fails(staged) || fails(done(staged).commit()));
        assertEquals(ids(rules(0, 2)), entries().keySet());
    }
}
