package org.metron.app.impl;

import org.junit.After;
import org.junit.Test;
import org.metron.agent.v1.PipelineStatus;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestLeadership;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.GrpcAgentClient;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * A controller instance that lost a chain without knowing it (a GC pause, a partition: {@link TestLeadership#isolate})
 * acts late against a real metron-agent, after the chain's new owner updated the chain's pipeline there. Its
 * requests carry its old term (owner_token 1), the new owner's carried term 2: the agent refuses them (ABORTED,
 * naming the pipeline and both tokens), the late instance stops without undoing anything, and the new owner's
 * pipeline runs on as it deployed it. The operator's PUT the late instance took is applied by the owner; the late
 * instance's own attempt at it is stopped by the term the owner claimed in the store (ChainTerms) before it sends
 * anything.
 */
public class FencingRealAgentTest {
    private static final DeviceId SERVER = DeviceId.deviceId("metron:fence");
    private static final ChainId WEB = ChainId.of("web");

    private final TestLeadership cluster = new TestLeadership();
    private final LocalStoreFactory shared = new LocalStoreFactory();
    private final TestSwitches switches = new TestSwitches();
    private final TestNetwork net = Fixtures.network(0);
    private final List<AutoCloseable> open = new ArrayList<>();
    private final List<String> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();
    private RealAgent agent;
    private TestServers servers;

    /** The agent as the controller reaches it, each call's outcome recorded ("UpdatePipeline ABORTED"). */
    private org.metron.drivers.agent.AgentClient recorded(org.metron.drivers.agent.AgentClient c) {
        return (org.metron.drivers.agent.AgentClient) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {org.metron.drivers.agent.AgentClient.class},
                (proxy, method, args) -> {
                    Object r;
                    try {
                        r = method.invoke(c, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (r instanceof java.util.concurrent.CompletableFuture && method.getName().endsWith("Pipeline")) {
                        ((java.util.concurrent.CompletableFuture<?>) r).whenComplete((v, e) -> outcomes.add(
                                method.getName() + " " + (e == null ? "OK" : AgentCalls.notOwner(e) ? "ABORTED"
                                        : "failed")));
                    }
                    return r;
                });
    }

    @After
    public void stop() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        if (agent != null) {
            agent.close();
        }
    }

    /** An instance over the shared store, with its ownership following the chains map as the hosts wire it. */
    private ChainManager instance(String name) {
        Duration t = Duration.ofSeconds(10);
        ChainStore store = new ChainStore(shared, switches);
        Synthesis synthesis = (spec, profile) -> RealAgentRestartTest.compiled(spec.name());
        ChainManager m = new ChainManager(store, servers, switches, cluster.instance(name),
                new PlacementEngine(FencedServers.of(servers, cluster.instance(name)), net, switches, new Random(1), t),
                new RulePlanner(Fixtures.APP, net), new Deployer(switches, t), t, synthesis);
        open.add(m::close);
        open.add(0, new ChainOwnership(store.chains(), cluster.instance(name), m::reconcile,
                System::currentTimeMillis).start(Duration.ofMillis(50)));
        return m;
    }

    private PipelineStatus web() throws Exception {
        return agent.client().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().stream()
                .filter(p -> p.getPipelineId().equals("web")).findFirst().orElseThrow();
    }

    private static String json(int port) {
        return Fixtures.chainJson("web").replace("dst port 80", "dst port " + port);
    }

    @Test
    public void aLateFormerOwnerIsRefusedAndTheNewOwnersPipelineRunsOn() throws Exception {
        agent = RealAgent.startOnPort("fence", 0);
        GrpcAgentClient client = agent.client();
        String nic = client.getResources().get(10, TimeUnit.SECONDS).getNicsList().get(0).getName();
        servers = new TestServers().add(new MetronServer(SERVER, recorded(client),
                Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
        ChainManager a = instance("a");
        cluster.instance("a").join(WEB); // a runs first: it owns web, term 1
        assertEquals(ChainState.ACTIVE, a.submit(json(80)).state());
        assertEquals(agent.log(), 1, web().getOwnerToken());
        ChainManager b = instance("b");
        cluster.instance("b").join(WEB);

        cluster.isolate("a"); // a is cut off: b owns web with term 2, a still believes it owns it with term 1
        assertEquals(2, cluster.instance("b").term(WEB).getAsLong());
        assertEquals(1, cluster.instance("a").term(WEB).getAsLong());
        Chain updated = b.update(WEB, json(81));
        assertEquals(ChainState.ACTIVE, updated.state());
        PipelineStatus newOwners = web();
        assertEquals(2, newOwners.getOwnerToken());
        int rules = switches.total();

        // a's late removal of the chain's pipeline (a step of a teardown, a move, a rollback it was in)
        MetronServer late = FencedServers.of(servers, cluster.instance("a")).server(SERVER).orElseThrow();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> late.agent().removePipeline("web").get(10, TimeUnit.SECONDS));
        AgentException refused = (AgentException) e.getCause();
        assertEquals(AgentException.Code.ABORTED, refused.code());
        assertTrue(refused.getMessage(), refused.getMessage().contains("RemovePipeline of pipeline web refused: "
                + "owner token 1 is older than 2"));
        assertTrue(AgentCalls.notOwner(e));

        // an operator's PUT reaching a, which acts as the owner: b claimed term 2 in the store when it began its
        // update, so a's first write of the update (the record of what it is about to install) is refused before
        // a sends anything (a stops, undoing nothing of b's) and leaves the update recorded, which b, the owner,
        // applies with its term. Before the store's claim, a's and b's records raced (1 run in 6, more when the
        // machine was loaded): b's make-before-break failed on a tag a's record named, or 3 switch rules were left.
        outcomes.clear();
        Chain viaA = a.update(WEB, json(82));
        assertFalse(viaA.toString(), viaA.updatePending());
        assertEquals(ChainState.ACTIVE, viaA.state());
        assertTrue(viaA.json().contains("dst port 82"));
        PipelineStatus now = web();
        assertEquals("b applied it: its term", 2, now.getOwnerToken());
        assertEquals("b's beside and retire; nothing of a's reached the agent",
                List.of("updatePipeline OK", "updatePipeline OK"), outcomes);
        assertEquals(newOwners.getGeneration() + 2, now.getGeneration()); // b's make-before-break: beside, retire
        assertEquals(rules, switches.total());
        assertEquals(now.getGroupsCount(), 1);
        assertEquals(ChainState.ACTIVE, b.chain(WEB).orElseThrow().state());

        b.remove(WEB);
        assertTrue(client.listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().isEmpty());
        assertEquals(0, switches.total());
    }
}
