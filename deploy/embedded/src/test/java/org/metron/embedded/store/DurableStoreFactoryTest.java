package org.metron.embedded.store;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.metron.app.store.ChainStore;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainState;
import org.metron.app.api.DeploymentSpec;
import org.metron.app.api.TagType;
import org.onosproject.net.ConnectPoint;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.serializers.KryoNamespaces;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

public class DurableStoreFactoryTest {
    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();
    private static final KryoNamespace NS = KryoNamespace.newBuilder().register(KryoNamespaces.BASIC).build();

    @Test
    public void writesSurviveARestartAndVersionedWritesStillCheckVersions() throws Exception {
        Path dir = tmp.getRoot().toPath();
        MetronMap<String, String> m = new DurableStoreFactory(dir).map("chains", NS);
        assertTrue(m.putIfAbsent("a", "1"));
        assertFalse(m.putIfAbsent("a", "2"));
        m.put("b", "2");
        long v = m.get("b").orElseThrow().version();
        assertFalse(m.replace("b", v + 100, "stale"));
        assertTrue(m.replace("b", v, "3"));
        m.put("c", "4");
        assertEquals("4", m.remove("c").orElseThrow());

        MetronMap<String, String> reopened = new DurableStoreFactory(dir).map("chains", NS);
        assertEquals(Map.of("a", "1", "b", "3"), reopened.snapshot());
        long rv = reopened.get("a").orElseThrow().version();
        assertTrue(reopened.replace("a", rv, "5"));
        assertEquals("5", new DurableStoreFactory(dir).map("chains", NS).get("a").orElseThrow().value());
    }

    @Test
    public void theControllersOwnStoreRoundTripsThroughDisk() {
        Path dir = tmp.getRoot().toPath();
        ChainStore store = new ChainStore(new DurableStoreFactory(dir));
        ChainId id = ChainId.of("fw-napt-lb");
        DeploymentSpec d = new DeploymentSpec(TagType.MAC, 1, 4, true,
                ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
                ConnectPoint.deviceConnectPoint("of:0000000000000002/1"), 1);
        Chain chain = new Chain(id, "{\"name\": \"fw-napt-lb\"}", d, ChainState.ACTIVE, "", 3);
        assertTrue(store.chains().putIfAbsent(id, chain));

        ChainStore restarted = new ChainStore(new DurableStoreFactory(dir));
        Chain back = restarted.chains().get(id).orElseThrow().value();
        assertEquals(chain.id(), back.id());
        assertEquals(chain.json(), back.json());
        assertEquals(chain.state(), back.state());
        assertEquals(chain.deployment().ingressPoint(), back.deployment().ingressPoint());
        assertEquals(chain.version(), back.version());
        assertTrue(restarted.placements().snapshot().isEmpty());
    }

    @Test
    public void aCorruptFileIsReportedByName() throws Exception {
        Path dir = tmp.getRoot().toPath();
        Files.write(dir.resolve("chains.map"), new byte[]{1, 2, 3, 4, 5});
        try {
            new DurableStoreFactory(dir).map("chains", NS);
            fail("corrupt store must not load");
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(dir.resolve("chains.map").toString()));
        }
    }

    @Test
    public void badMapNamesAreRejected() {
        try {
            new DurableStoreFactory(tmp.getRoot().toPath()).map("../etc", NS);
            fail();
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("'../etc'"));
        }
    }
}
