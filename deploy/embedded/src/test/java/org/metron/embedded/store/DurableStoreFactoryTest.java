package org.metron.embedded.store;

import org.metron.app.api.Deployments;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.metron.app.store.ChainStore;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainState;
import org.metron.synth.Deployment;
import org.metron.synth.TagType;
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

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

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

    /** This test stores no installed state: nothing reads a device. */
    private static final org.metron.app.spi.SwitchProgrammer NO_SWITCHES = new org.metron.app.spi.SwitchProgrammer() {
        @Override
        public java.util.concurrent.CompletableFuture<Void> install(org.onosproject.net.DeviceId d,
                                                                    java.util.List<org.onosproject.net.flow.FlowRule> r) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> remove(org.onosproject.net.DeviceId d,
                java.util.Collection<org.onosproject.net.flow.FlowRule> r) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.Collection<org.onosproject.net.flow.FlowEntry> entries(org.onosproject.net.DeviceId d) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int ruleCount(org.onosproject.net.DeviceId d) {
            throw new UnsupportedOperationException();
        }
    };

    @Test
    public void theControllersOwnStoreRoundTripsThroughDisk() {
        Path dir = tmp.getRoot().toPath();
        ChainStore store = new ChainStore(new DurableStoreFactory(dir), NO_SWITCHES);
        ChainId id = ChainId.of("fw-napt-lb");
        Deployment d = Deployments.of(TagType.MAC, 1, 4, true,
                ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
                ConnectPoint.deviceConnectPoint("of:0000000000000002/1"), 1);
        Chain chain = new Chain(id, "{\"name\": \"fw-napt-lb\"}", d, ChainState.ACTIVE, "", 3);
        assertTrue(store.chains().putIfAbsent(id, chain));

        ChainStore restarted = new ChainStore(new DurableStoreFactory(dir), NO_SWITCHES);
        Chain back = restarted.chains().get(id).orElseThrow().value();
        assertEquals(chain.id(), back.id());
        assertEquals(chain.json(), back.json());
        assertEquals(chain.state(), back.state());
        assertEquals(ingress(chain.deployment()), ingress(back.deployment()));
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
    public void aCorruptJournalIsReportedByName() throws Exception {
        Path dir = tmp.getRoot().toPath();
        new DurableStoreFactory(dir).map("chains", NS).put("a", "1");
        Path journal = dir.resolve("chains.journal");
        byte[] bytes = Files.readAllBytes(journal);
        bytes[0] ^= 0x55;
        Files.write(journal, bytes);
        try {
            new DurableStoreFactory(dir).map("chains", NS);
            fail("corrupt journal must not load");
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(journal.toString()));
        }
    }

    @Test
    public void aRecordTornByACrashIsCutOffAndEverythingBeforeItSurvives() throws Exception {
        Path dir = tmp.getRoot().toPath();
        MetronMap<String, String> m = new DurableStoreFactory(dir).map("chains", NS);
        m.put("a", "1");
        m.put("b", "2");
        Path journal = dir.resolve("chains.journal");
        long whole = Files.size(journal);
        m.put("c", "x".repeat(1000));
        // the host died while appending c's record: half of it reached the disk
        byte[] bytes = Files.readAllBytes(journal);
        Files.write(journal, java.util.Arrays.copyOf(bytes, (int) (whole + (bytes.length - whole) / 2)));
        MetronMap<String, String> reopened = new DurableStoreFactory(dir).map("chains", NS);
        assertEquals(Map.of("a", "1", "b", "2"), reopened.snapshot());
        assertEquals(whole, Files.size(journal));
        reopened.put("d", "4");
        assertEquals(Map.of("a", "1", "b", "2", "d", "4"), new DurableStoreFactory(dir).map("chains", NS).snapshot());
    }

    @Test
    public void aWriteAppendsOneRecordAndTheJournalIsCompactedWhenMostlyDead() throws Exception {
        Path dir = tmp.getRoot().toPath();
        MetronMap<String, String> m = new DurableStoreFactory(dir).map("installed", NS);
        Path journal = dir.resolve("installed.journal");
        m.put("big", "x".repeat(100_000));
        long one = Files.size(journal);
        m.put("small", "1");
        assertTrue("a small write appends a small record", Files.size(journal) - one < 100);
        for (int i = 0; i < 60; i++) {
            m.put("big", i + "x".repeat(100_000)); // 6 MB of dead records: compacted on the way
        }
        m.remove("small");
        assertTrue("compacted: " + Files.size(journal), Files.size(journal) < 5 * one);
        assertEquals(Map.of("big", "59" + "x".repeat(100_000)),
                new DurableStoreFactory(dir).map("installed", NS).snapshot());
    }

    @Test
    public void aSnapshotFromAnEarlierHostIsConvertedToEntries() throws Exception {
        Path dir = tmp.getRoot().toPath();
        java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(raw);
        out.writeInt(0x4d544d31);
        out.writeInt(2);
        for (String kv : new String[]{"a", "1", "b", "2"}) {
            byte[] b = NS.serialize(kv);
            out.writeInt(b.length);
            out.write(b);
        }
        Files.write(dir.resolve("chains.map"), raw.toByteArray());
        assertEquals(Map.of("a", "1", "b", "2"), new DurableStoreFactory(dir).map("chains", NS).snapshot());
        assertFalse(Files.exists(dir.resolve("chains.map")));
        assertEquals(Map.of("a", "1", "b", "2"), new DurableStoreFactory(dir).map("chains", NS).snapshot());
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
