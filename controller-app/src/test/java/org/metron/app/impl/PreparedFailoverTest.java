package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.api.TagAllocation;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.onlab.util.KryoNamespace;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * A lost server's chains readied on another server while the failover deadline runs (ChainManager.serverSuspected):
 * traffic untouched until the deadline; then the move is the switch rules and one round of record writes; the
 * readied pipeline taken back when the agent answers in time (the chain recovers in place) or the chain is deleted.
 */
public class PreparedFailoverTest {
    private static final ChainId WEB = ChainId.of("web");

    /** Two servers, "web" on one of them: its index. */
    private static int submit(World w) {
        w.manager.submit(Fixtures.chainJson("web"));
        return w.manager.placement(WEB).get().server().get().toString().equals(Fixtures.serverId(0)) ? 0 : 1;
    }

    /** Server {@code l}'s agent dead, its device gone, "web" readied on the other: that one's agent. */
    private static TestAgent readiedOffDeadServer(World w, int l) {
        w.agents.get(l).unreachable(true);
        w.servers.remove(server(l));
        w.manager.serverSuspected(server(l));
        w.manager.awaitFailoverWork(server(l));
        TestAgent spare = w.agents.get(1 - l);
        assertTrue("readied on the spare", spare.pipelines().containsKey("web"));
        return spare;
    }

    private static DeviceId server(int i) {
        return DeviceId.deviceId(Fixtures.serverId(i));
    }

    @Test
    public void readiedDuringTheDeadlineTheMoveIsTheSwitchRulesAndOneRoundOfWrites() {
        List<String> writes = Collections.synchronizedList(new ArrayList<>());
        World w = new World(2, Fixtures.synthesis(), 42, counting(writes));
        int l = submit(w);
        DeviceId lost = server(l);
        TestAgent spare = w.agents.get(1 - l);
        Placement before = w.manager.placement(WEB).get();
        List<String> rulesBefore = sortedRules(w);
        w.agents.get(l).unreachable(true);
        w.servers.remove(lost); // ONOS: an unavailable device leaves the registry

        w.manager.serverSuspected(lost);
        w.manager.awaitFailoverWork(lost);

        // readied, traffic untouched: the pipeline runs on the spare, the chain is where it was with its rules
        assertTrue("the pipeline is up on the spare", spare.pipelines().containsKey("web"));
        assertEquals(before, w.manager.placement(WEB).get());
        assertEquals(ChainState.ACTIVE, w.manager.chain(WEB).get().state());
        assertEquals("no switch rule changed while the deadline runs", rulesBefore, sortedRules(w));
        // what it holds is reserved: its cores against other placements, its tags in the store
        long tags = w.manager.tags().stream().filter(t -> t.server().equals(lost)).count();
        assertTrue(tags > 0);
        assertEquals(tags, w.manager.tags().stream().filter(t -> t.server().equals(server(1 - l))).count());

        w.manager.awaitBackups(); // the submission's backup refresh has written
        writes.clear();
        int spareCalls = spare.calls().size();
        assertEquals(List.of(WEB), w.manager.serverLost(lost));

        Placement after = w.manager.placement(WEB).get();
        assertEquals(server(1 - l), after.server().get());
        Chain c = w.manager.chain(WEB).get();
        assertEquals(ChainState.ACTIVE, c.state());
        assertEquals("moved off " + lost + " (unavailable) to " + server(1 - l), c.reason());
        assertEquals("no agent call after the deadline: the pipeline was up", spareCalls, spare.calls().size());
        // the records: placement, installed rules, chain, backups once each (written at once), then the readied
        // move's record (its cores are the placement's now) and the old placement's tags released behind the traffic; nothing released, reserved or stepped through states
        // (moved from scratch, the same move wrote 14 times one after the other and asked the spare 6 times)
        List<String> expected = new ArrayList<>(List.of("metron-backups put", "metron-chains replace",
                "metron-installed-rules put", "metron-placements put", "metron-prepared-moves remove"));
        expected.addAll(Collections.nCopies((int) tags, "metron-tags remove"));
        // (the backup refresh the move starts afterwards, in the background, may have written too)
        List<String> written = List.copyOf(writes); // (the refresh may still be writing)
        assertEquals(expected, written.subList(0, expected.size()).stream().sorted().collect(Collectors.toList()));
        assertTrue(written.subList(expected.size(), written.size()).stream().allMatch("metron-backups replace"::equals));
        // the switch rules lead to the spare only; the old placement's tags are gone
        assertEquals(w.manager.rules(null).size(), w.switches.total());
        assertTrue(w.manager.tags().stream().allMatch(t -> t.server().equals(server(1 - l))));
        assertEquals(1, spare.pipelines().size());
        w.manager.remove(WEB);
        assertEquals(0, w.switches.total());
        assertTrue(spare.pipelines().isEmpty());
    }

    /**
     * After the deadline the readied move reads, before its switch rules go live, only what may have changed while
     * the deadline ran: the chain and its placement (a delete, another move), and the fence's newest term once for
     * all its switch commits. No whole map is read there (in a cluster each read is a Raft round: in the 3-node
     * Karaf test the move spent 292 ms before its switch rules and 240 more before their commits were issued, two
     * placement snapshots, an installed-rules snapshot, the term claim the readying had made already and one term
     * read per switch), and the term claimed while readying is not claimed again.
     */
    @Test
    public void afterTheDeadlineTheMoveReadsOnlyWhatMayHaveChangedBeforeItsSwitchRules() {
        List<String> ops = Collections.synchronizedList(new ArrayList<>());
        World w = new World(2, Fixtures.synthesis(), 42, recording(ops, true));
        int l = submit(w);
        DeviceId lost = server(l);
        readiedOffDeadServer(w, l);
        w.manager.awaitBackups();
        ops.clear();

        assertEquals(List.of(WEB), w.manager.serverLost(lost));

        List<String> all = List.copyOf(ops);
        // the records' round: its first write to the last of its five (the readied move's record goes last)
        int recorded = all.indexOf(all.stream().filter(o -> !o.endsWith(" get") && !o.endsWith(" snapshot"))
                .findFirst().orElseThrow());
        int done = all.indexOf("metron-prepared-moves remove");
        // the old installed rules are read beside the chain and its placement, but only used behind the traffic
        List<String> before = all.subList(0, recorded).stream().filter(o -> !o.equals("metron-installed-rules get"))
                .sorted().collect(Collectors.toList());
        assertEquals(all.toString(), List.of("metron-chain-terms get", "metron-chains get", "metron-placements get"),
                before);
        assertTrue(all.toString(), all.subList(0, recorded).contains("metron-installed-rules get"));
        // the chain record replaces the version read: no read in the round of writes either
        assertEquals(all.toString(), List.of("metron-backups put", "metron-chains replace",
                "metron-installed-rules put", "metron-placements put"), all.subList(recorded, done).stream().sorted()
                .collect(Collectors.toList()));
    }

    @Test
    public void anAgentBackWithinTheDeadlineKeepsItsChainAndTheReadiedPipelineGoes() throws Exception {
        World w = new World(2, Fixtures.synthesis(), 42);
        int l = submit(w);
        DeviceId lost = server(l);
        TestAgent agent = w.agents.get(l);
        TestAgent spare = w.agents.get(1 - l);
        Placement before = w.manager.placement(WEB).get();
        List<String> rulesBefore = sortedRules(w);
        List<TagAllocation> tagsBefore = List.copyOf(w.manager.tags());
        Duration t = Duration.ofSeconds(2);
        // the embedded host's wiring: the watch tells of the silence and of the return
        ServerFailover failover = new ServerFailover(w.manager, Duration.ofHours(1), id -> true);
        AgentWatch watch = new AgentWatch(w.servers, new ServerRecovery(w.store, w.manager, t), t).failover(failover);
        agent.unreachable(true);
        watch.check();
        w.manager.awaitFailoverWork(lost);
        assertTrue("readied on the spare", spare.pipelines().containsKey("web"));

        // the agent restarted within the deadline (it lost its pipeline): it is restored in place, the readied
        // pipeline removed from the spare, its tags released; nothing moved
        agent.restart().unreachable(false);
        watch.check();
        w.manager.awaitFailoverWork(lost);

        assertTrue("restored in place", agent.pipelines().containsKey("web"));
        assertFalse("the readied pipeline is removed", spare.pipelines().containsKey("web"));
        assertEquals(before, w.manager.placement(WEB).get());
        assertEquals(ChainState.ACTIVE, w.manager.chain(WEB).get().state());
        assertEquals(rulesBefore, sortedRules(w));
        assertEquals(Set.copyOf(tagsBefore), Set.copyOf(w.manager.tags()));
        // a late loss report (an event that was queued) moves nothing it readied: there is nothing readied
        watch.close();
        failover.close();
    }

    @Test
    public void aChainDeletedDuringTheDeadlineIsNeverPlaced() {
        World w = new World(2, Fixtures.synthesis(), 42);
        int l = submit(w);
        DeviceId lost = server(l);
        TestAgent spare = readiedOffDeadServer(w, l);

        // DELETE while the deadline runs: the tombstone stays (the dead agent still holds the pipeline), the
        // readied pipeline goes from the spare, and the deadline passing places nothing
        Optional<Chain> left = w.manager.remove(WEB);
        assertTrue(left.isPresent());
        assertEquals(ChainState.REMOVING, left.get().state());
        assertFalse("the readied pipeline is removed", spare.pipelines().containsKey("web"));
        assertTrue(w.manager.serverLost(lost).isEmpty());

        assertFalse(spare.pipelines().containsKey("web"));
        assertEquals(ChainState.REMOVING, w.manager.chain(WEB).get().state());
        assertTrue("nothing placed on the spare", w.manager.placement(WEB).map(p -> p.server())
                .filter(s -> s.equals(Optional.of(server(1 - l)))).isEmpty());
        assertTrue(w.manager.tags().stream().noneMatch(t -> t.server().equals(server(1 - l))));
    }

    @Test
    public void aSwitchRefusingTheReadiedMoveLeavesNothingOfItAnywhere() {
        World w = new World(2, Fixtures.synthesis(), 42);
        int l = submit(w);
        DeviceId lost = server(l);
        TestAgent spare = readiedOffDeadServer(w, l);
        // the ingress switch refuses: its rules and the other switch's (committed at the same time) are undone, the
        // readied pipeline and tags go; moved from scratch it fails the same way, and says so
        w.switches.reject(Fixtures.D1);
        int before = w.switches.rules(Fixtures.D2).size();

        assertTrue(w.manager.serverLost(lost).isEmpty());

        assertTrue("the spare holds nothing of it", spare.pipelines().isEmpty() && spare.nicRules().isEmpty());
        assertTrue(w.manager.tags().stream().noneMatch(t -> t.server().equals(server(1 - l))));
        assertTrue("no rule of the refused move left", w.switches.rules(Fixtures.D2).size() <= before);
        Chain c = w.manager.chain(WEB).get();
        assertEquals(ChainState.FAILED, c.state());
        assertTrue(c.reason(), c.reason().contains(lost.toString()));
    }

    @Test
    public void withNoSpareNothingIsReadiedAndTheChainIsDegradedNamingItsServer() {
        World w = new World(2, Fixtures.synthesis(), 42);
        int l = submit(w);
        DeviceId lost = server(l);
        w.agents.get(l).unreachable(true);
        w.agents.get(1 - l).unreachable(true); // the other server cannot take it either
        w.manager.serverSuspected(lost);
        w.manager.awaitFailoverWork(lost);
        assertTrue(w.agents.get(1 - l).pipelines().isEmpty());

        assertTrue(w.manager.serverLost(lost).isEmpty());
        Chain c = w.manager.chain(WEB).get();
        assertEquals(ChainState.DEGRADED, c.state());
        assertTrue(c.reason(), c.reason().startsWith("server " + lost + " became unavailable; no other server"));
        assertEquals(lost, w.manager.placement(WEB).get().server().get());
        assertTrue(c.pending().stream().allMatch(p -> p.device().equals(lost)));
    }

    @Test
    public void aChainMovedOtherwiseMeanwhileIsMovedFromScratchAndTheReadiedPartGoes() {
        World w = new World(3, Fixtures.synthesis(), 42);
        w.manager.submit(Fixtures.chainJson("web"));
        DeviceId lost = w.manager.placement(WEB).get().server().get();
        w.manager.serverSuspected(lost);
        w.manager.awaitFailoverWork(lost);
        long readied = w.agents.stream().filter(a -> a.pipelines().containsKey("web")).count();
        assertEquals("running on its server and readied on another", 2, readied);
        // the chain's placement changes (a scaling operation, say) before the deadline passes: the readied move
        // no longer fits it and is taken back; the move is made from the current placement
        Placement now = w.manager.placement(WEB).get();
        w.store.placements().put(WEB, new Placement(WEB, now.server(), now.nic(),
                now.egressNic().equals("eth0") ? "eth1" : "eth0", now.offloadDevice(), now.offloadProfile(),
                now.groups()));
        w.servers.remove(lost);
        assertEquals(List.of(WEB), w.manager.serverLost(lost));
        assertEquals(ChainState.ACTIVE, w.manager.chain(WEB).get().state());
        DeviceId to = w.manager.placement(WEB).get().server().get();
        assertEquals("one pipeline outside the lost server", 1, w.agents.stream()
                .filter(a -> !a.target().equals(targetOf(w, lost)) && a.pipelines().containsKey("web")).count());
        assertTrue(w.agents.stream().filter(a -> a.pipelines().containsKey("web")).anyMatch(a -> a.target()
                .equals(targetOf(w, to))));
    }

    private static String targetOf(World w, DeviceId server) {
        return w.agents.get(Integer.parseInt(server.toString().substring("metron:server".length()))).target();
    }

    private static List<String> sortedRules(World w) {
        return java.util.stream.Stream.of(Fixtures.D1, Fixtures.D2).flatMap(d -> w.switches.rules(d).stream())
                .map(Object::toString).sorted().collect(Collectors.toList());
    }

    /** A store factory whose maps note each write ("map put", "map remove", ...) in {@code writes}. */
    static StoreFactory counting(List<String> writes) {
        return recording(writes, false);
    }

    /**
     * A store factory whose maps note each write ("map put", "map remove", ...) in {@code ops}, in the order they are
     * made, and with {@code reads} each read too ("map get", "map snapshot": in a cluster each is a Raft round).
     */
    static StoreFactory recording(List<String> ops, boolean reads) {
        List<String> writes = ops;
        LocalStoreFactory local = new LocalStoreFactory();
        return new StoreFactory() {
            @Override
            public <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace) {
                MetronMap<K, V> m = local.map(name, namespace);
                return new MetronMap<>() {
                    @Override
                    public Optional<Versioned<V>> get(K key) {
                        if (reads) {
                            ops.add(name + " get");
                        }
                        return m.get(key);
                    }

                    @Override
                    public boolean putIfAbsent(K key, V value) {
                        writes.add(name + " putIfAbsent");
                        return m.putIfAbsent(key, value);
                    }

                    @Override
                    public boolean replace(K key, long version, V value) {
                        writes.add(name + " replace");
                        return m.replace(key, version, value);
                    }

                    @Override
                    public void put(K key, V value) {
                        writes.add(name + " put");
                        m.put(key, value);
                    }

                    @Override
                    public Optional<V> remove(K key) {
                        writes.add(name + " remove");
                        return m.remove(key);
                    }

                    @Override
                    public Map<K, V> snapshot() {
                        if (reads) {
                            ops.add(name + " snapshot");
                        }
                        return m.snapshot();
                    }

                    @Override
                    public void addListener(Consumer<K> changed) {
                        m.addListener(changed);
                    }

                    @Override
                    public void removeListener(Consumer<K> changed) {
                        m.removeListener(changed);
                    }
                };
            }
        };
    }
}
