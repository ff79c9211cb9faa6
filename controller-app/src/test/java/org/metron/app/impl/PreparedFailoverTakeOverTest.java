package org.metron.app.impl;

import org.junit.After;
import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.PreparedMoveRecord;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestLeadership;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * A failover move readied during a lost server's deadline, in a cluster: two controller instances over one store
 * (each with its own memory and chain locks, as two JVMs; {@link TestLeadership} elects the chains' owners), one
 * network. The owner that readied a move stops during the deadline: the next owner takes back what the stopped one
 * readied (recorded in the store before the spare was asked for anything) and moves the chain itself, or leaves it
 * where it is when its server came back; nothing stays on the spare, no tag or core stays claimed, nothing runs
 * twice. And a readied move's cores are held for the other instance's placements too.
 */
public class PreparedFailoverTakeOverTest {
    private static final ChainId WEB = ChainId.of("web");

    private final World w = new World(2, Fixtures.synthesis(), 42);
    private final LocalStoreFactory shared = new LocalStoreFactory();
    private final TestLeadership cluster = new TestLeadership();
    private final List<AutoCloseable> open = new ArrayList<>();
    private ChainStore store;

    /**
     * An instance over the shared store; {@code b}'s ownership sweeps every 50 ms as the hosts wire it. The owner a
     * runs none: a reconcile its worker queued while "web" was brought up could otherwise run after the test took
     * web's server away, and move the chain at once (a chain ACTIVE on a server gone from the registry is moved
     * when its owner reconciles it), before the deadline this test is about.
     */
    private ChainManager instance(String name) {
        ChainStore s = new ChainStore(shared, w.switches);
        store = s;
        ChainManager m = new ChainManager(s, w.servers, w.switches, cluster.instance(name),
                new PlacementEngine(w.servers, w.network, w.switches, new Random(1), Duration.ofSeconds(1)),
                new RulePlanner(Fixtures.APP, w.network), new Deployer(w.switches, Duration.ofSeconds(1)),
                Duration.ofSeconds(1), Fixtures.synthesis());
        open.add(m::close);
        if (!name.equals("a")) {
            ChainOwnership o = new ChainOwnership(s.chains(), cluster.instance(name), m::reconcile,
                    m::leftFailoverMoves, System::currentTimeMillis).start(Duration.ofMillis(50));
            open.add(o);
        }
        return m;
    }

    /** The instance dies: it leaves every election (the next candidate owns its chains) and does nothing more. */
    private void kill(String name) {
        cluster.stop(name);
    }

    @After
    public void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private static DeviceId server(int i) {
        return DeviceId.deviceId(Fixtures.serverId(i));
    }

    /** "web" submitted on a (its owner, b a candidate), readied on the spare while its agent is dead: its server. */
    private int readiedByA(ChainManager a) {
        a.submit(Fixtures.chainJson("web"));
        await("b runs for web", () -> cluster.candidates(WEB).contains("b")); // b's ownership sweep joins it
        int l = a.placement(WEB).get().server().get().equals(server(0)) ? 0 : 1;
        w.agents.get(l).unreachable(true);
        w.servers.remove(server(l)); // ONOS: an unavailable device leaves the registry
        a.serverSuspected(server(l));
        a.awaitFailoverWork(server(l));
        assertTrue("readied on the spare", w.agents.get(1 - l).pipelines().containsKey("web"));
        assertTrue("the readied move is recorded", store.prepared().get(WEB).isPresent());
        return l;
    }

    @Test
    public void anOwnerDeadDuringTheDeadlineLeavesNothingAndTheNextOwnerMovesTheChainOnce() {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        int l = readiedByA(a);
        TestAgent spare = w.agents.get(1 - l);

        kill("a"); // during the deadline: a never moves the chain

        // b owns the chain: it takes back a's readied pipeline and tags, then moves the chain from scratch
        await("web ACTIVE on the spare, moved by b", () -> b.placement(WEB).flatMap(Placement::server)
                .equals(java.util.Optional.of(server(1 - l))) && b.chain(WEB).get().state() == ChainState.ACTIVE
                && b.chain(WEB).get().reason().startsWith("moved off " + server(l))); // its last write
        assertEquals("one pipeline on the spare", Set.of("web"), spare.pipelines().keySet());
        List<String> calls = spare.calls().stream().filter(c -> c.endsWith("Pipeline")).collect(Collectors.toList());
        assertEquals("readied by a, taken back by b, deployed once by b",
                List.of("DeployPipeline", "RemovePipeline", "DeployPipeline"), calls);
        assertTrue("no move recorded", store.prepared().snapshot().isEmpty());
        assertTrue("no move held: its cores are free", b.reservedCores(server(1 - l)).containsAll(
                b.placement(WEB).get().cores()) && b.reservedCores(server(1 - l)).size()
                == b.placement(WEB).get().cores().size());
        // the tags the chain holds are its placement's, on the spare: nothing of a's claim or of the old placement
        Set<Tag> placed = b.placement(WEB).get().groups().stream().map(g -> g.tag()).collect(Collectors.toSet());
        Set<Tag> held = b.tags().stream().filter(t -> t.chainId().equals(WEB)).map(TagAllocation::tag)
                .collect(Collectors.toSet());
        assertEquals(placed, held);
        assertTrue(b.tags().stream().allMatch(t -> t.server().equals(server(1 - l))));
        assertEquals("the switches hold the chain's rules once", b.rules(null).size(), w.switches.total());
        // and the deadline passing on b (its own timer) changes nothing
        assertTrue(b.serverLost(server(l)).isEmpty());
        assertEquals(Set.of("web"), spare.pipelines().keySet());
    }

    @Test
    public void anOwnerDeadDuringTheDeadlineOfAServerThatCameBackLeavesTheChainWhereItIs() {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        int l = readiedByA(a);
        TestAgent spare = w.agents.get(1 - l);
        Placement before = a.placement(WEB).get();
        Set<TagAllocation> tagsBefore = b.tags().stream().filter(t -> t.server().equals(server(l)))
                .collect(Collectors.toSet()); // the readied move's claims are on the spare

        // the agent answers again (within the deadline) and a dies before it took its readied move back
        w.agents.get(l).unreachable(false);
        w.servers.add(Fixtures.server(l, w.agents.get(l)));
        kill("a");

        await("a's readied move taken back by b", () -> store.prepared().snapshot().isEmpty());
        assertFalse("the readied pipeline is removed from the spare", spare.pipelines().containsKey("web"));
        assertTrue(spare.nicRules().isEmpty());
        assertEquals(before, b.placement(WEB).get());
        assertEquals(ChainState.ACTIVE, b.chain(WEB).get().state());
        assertEquals("only the chain's own tags are claimed", tagsBefore, Set.copyOf(b.tags()));
        assertTrue(w.agents.get(l).pipelines().containsKey("web"));
    }

    /**
     * While a's move is readied on the spare (its pipeline still starting there: the agent does not report its core
     * yet), b places another chain on the spare: it takes none of the readied move's cores.
     */
    @Test
    public void aReadiedMovesCoresAreHeldForEveryInstance() throws Exception {
        ChainManager a = instance("a");
        ChainManager b = instance("b");
        a.submit(Fixtures.chainJson("web"));
        int l = a.placement(WEB).get().server().get().equals(server(0)) ? 0 : 1;
        // the spare's agent starts web's pipeline only when the test says so
        CompletableFuture<Void> gate = new CompletableFuture<>();
        w.servers.remove(server(1 - l));
        w.servers.add(new MetronServer(server(1 - l), gated(w.agents.get(1 - l), "web", gate),
                Fixtures.server(1 - l, w.agents.get(1 - l)).attachments()));
        w.agents.get(l).unreachable(true);
        w.servers.remove(server(l));
        a.serverSuspected(server(l));
        await("a's move recorded", () -> store.prepared().get(WEB).isPresent());
        PreparedMoveRecord r = store.prepared().get(WEB).get().value();
        assertEquals(server(1 - l), r.to());
        assertTrue("b sees the readied cores as taken", b.reservedCores(server(1 - l)).containsAll(r.placement()
                .cores()));

        // b owns "big" (submitted there), which needs 3 of the spare's 4 cores
        ChainId big = ChainId.of("big");
        assertEquals(ChainState.ACTIVE, b.submit(Fixtures.chainJsonAt("big", "mac", 3, 1, 2)).state());
        List<Integer> bigCores = b.placement(big).get().cores();
        assertEquals(server(1 - l), b.placement(big).get().server().get());
        assertTrue("b took a core of a's readied move: " + bigCores + " vs " + r.placement().cores(),
                bigCores.stream().noneMatch(r.placement().cores()::contains));

        gate.complete(null);
        a.awaitFailoverWork(server(l));
        assertEquals(List.of(WEB), a.serverLost(server(l)));
        assertEquals(ChainState.ACTIVE, a.chain(WEB).get().state());
        assertEquals(r.placement().cores(), a.placement(WEB).get().cores());
        assertTrue(store.prepared().snapshot().isEmpty());
        assertEquals(Set.of("web", "big"), w.agents.get(1 - l).pipelines().keySet());
    }

    /** {@code agent}, whose deployment of {@code pipeline} starts once {@code gate} completes. */
    private static AgentClient gated(TestAgent agent, String pipeline, CompletableFuture<Void> gate) {
        return (AgentClient) Proxy.newProxyInstance(AgentClient.class.getClassLoader(),
                new Class<?>[] {AgentClient.class}, (proxy, method, args) -> {
                    if (method.getName().equals("deployPipeline")
                            && ((DeployPipelineRequest) args[0]).getPipelineId().equals(pipeline)) {
                        return gate.thenCompose(v -> agent.deployPipeline((DeployPipelineRequest) args[0]));
                    }
                    try {
                        return method.invoke(agent, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static void await(String what, BooleanSupplier done) {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within 10 s: " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
