package org.metron.app.scaling;

import org.metron.app.testing.TestSwitches;
import org.junit.After;
import org.junit.Test;
import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Deployments;
import org.metron.synth.TagType;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import java.util.function.BooleanSupplier;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** What black boxes' states mean for their chains (BlackBoxWatch), from the agents' reports alone. */
public class BlackBoxWatchTest {
    private static final DeviceId SERVER = DeviceId.deviceId("metron:10.0.0.1:50051");
    private final ChainStore store = new ChainStore(new LocalStoreFactory(), new TestSwitches());
    private final BlackBoxWatch watch = new BlackBoxWatch(store, new SingleInstanceLeadership());

    @After
    public void close() {
        watch.close();
    }

    private void put(String name, ChainState state) {
        ChainId id = ChainId.of(name);
        store.chains().put(id, new Chain(id, "{}", Deployments.of(TagType.MAC, 1, 1, false,
                ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1"), ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3"),
                1), state, "", 0));
    }

    private ChainState state(String name) {
        return store.chains().get(ChainId.of(name)).map(Versioned::value).map(Chain::state).orElseThrow();
    }

    /** One report: chains web and shop each run NF "ids" in group g0; web's in state {@code webState}. */
    private static Stats report(String webState, String shopState) {
        return Stats.newBuilder().addGroups(group("web", webState)).addGroups(group("shop", shopState)).build();
    }

    private static GroupStats group(String chain, String state) {
        return GroupStats.newBuilder().setPipelineId(chain).setGroupId("g0").addBlackBoxes(BlackBoxStats.newBuilder()
                .setElement("bb").setNf("ids").setMode("RING").setState(state).setOnFailure("CLOSED")
                .setRestarts(state.equals("FAILED") ? 10 : 0).setLastExit(state.equals("FAILED") ? "exit 1" : ""))
                .build();
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 200 && !done.getAsBoolean(); i++) {
            Thread.sleep(10);
        }
        assertTrue(what, done.getAsBoolean());
    }

    @Test
    public void onlyTheChainWhoseBoxFailedIsDegradedAndComesBackWhenItRunsAgain() throws Exception {
        put("web", ChainState.ACTIVE);
        put("shop", ChainState.ACTIVE);
        watch.observe(SERVER, report("RUNNING", "RUNNING"), 1);
        watch.observe(SERVER, report("FAILED", "RESTARTING"), 2);
        await("web DEGRADED", () -> state("web") == ChainState.DEGRADED);
        Chain web = store.chains().get(ChainId.of("web")).get().value();
        assertEquals("black box ids (group g0, element bb)", web.pending().get(0).what());
        assertEquals("FAILED after 10 restarts, last exit 1", web.pending().get(0).why());
        assertEquals(SERVER, web.pending().get(0).device());
        // a box being restarted leaves its chain ACTIVE: the declared policy applies meanwhile
        assertEquals(ChainState.ACTIVE, state("shop"));
        assertEquals(2, watch.all().size());
        assertEquals("RESTARTING", watch.of(ChainId.of("shop")).get(0).stats().getState());

        watch.observe(SERVER, report("RUNNING", "RUNNING"), 3);
        await("web ACTIVE again", () -> state("web") == ChainState.ACTIVE);
        assertTrue(store.chains().get(ChainId.of("web")).get().value().pending().isEmpty());
    }

    @Test
    public void aFailedBoxDegradesItsChainOnceTheChainIsActive() throws Exception {
        put("web", ChainState.DEPLOYED);
        watch.observe(SERVER, report("FAILED", "RUNNING"), 1);
        // not ACTIVE yet: nothing to degrade; once ACTIVE, the still-FAILED box degrades it at the next report
        Thread.sleep(100);
        assertEquals(ChainState.DEPLOYED, state("web"));
        put("web", ChainState.ACTIVE);
        watch.observe(SERVER, report("FAILED", "RUNNING"), 2);
        await("web DEGRADED", () -> state("web") == ChainState.DEGRADED);
    }

    @Test
    public void aChainDegradedForAnotherReasonIsLeftToThatReason() throws Exception {
        ChainId id = ChainId.of("web");
        put("web", ChainState.ACTIVE);
        Chain lost = store.chains().get(id).get().value().withState(ChainState.DEGRADED, "server lost",
                java.util.List.of(new org.metron.app.api.PendingPart(SERVER, "pipeline web", "server unavailable")));
        store.chains().put(id, lost);
        watch.observe(SERVER, report("FAILED", "RUNNING"), 1);
        watch.observe(SERVER, report("RUNNING", "RUNNING"), 2);
        Thread.sleep(200);
        assertEquals(lost, store.chains().get(id).get().value());
    }
}
