package org.metron.embedded.contract;

import org.junit.Test;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.serializers.KryoNamespaces;
import org.onosproject.store.service.Versioned;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * What the controller core may assume of a {@link StoreFactory} and its {@link MetronMap}s (spi/MetronMap's
 * contract), asked of every implementation the same way: ONOS's (a ConsistentMap from StorageService) and the
 * embedded host's (journaled on disk). A subclass per implementation; any call on which two answer differently
 * fails one of them here.
 */
public abstract class MetronMapContract {
    /** Strings and lists only: what is not registered here must not be stored. */
    protected static final KryoNamespace NAMESPACE = KryoNamespace.newBuilder().register(KryoNamespaces.BASIC)
            .build("contract");
    private static final long EVENT_WAIT_MS = 2_000;

    /** A fresh factory (no map of it written yet). */
    protected abstract StoreFactory factory();

    private final StoreFactory factory = factory();

    private MetronMap<String, ArrayList<String>> map() {
        return factory.map("contract-map", NAMESPACE);
    }

    private static ArrayList<String> list(String... s) {
        return new ArrayList<>(List.of(s));
    }

    @Test
    public void anAbsentKeyReadsEmptyAndRemovesToEmpty() {
        MetronMap<String, ArrayList<String>> m = map();
        assertEquals(Optional.empty(), m.get("a"));
        assertEquals(Optional.empty(), m.remove("a"));
        assertEquals(Map.of(), m.snapshot());
    }

    @Test
    public void putIfAbsentInsertsOnce() {
        MetronMap<String, ArrayList<String>> m = map();
        assertTrue(m.putIfAbsent("a", list("1")));
        assertFalse(m.putIfAbsent("a", list("2")));
        assertEquals(list("1"), m.get("a").get().value());
    }

    @Test
    public void everyWriteBumpsTheVersionAndReplaceNeedsTheCurrentOne() {
        MetronMap<String, ArrayList<String>> m = map();
        m.putIfAbsent("a", list("1"));
        long v1 = m.get("a").get().version();
        m.put("a", list("1")); // the same value again is a write too
        long v2 = m.get("a").get().version();
        assertTrue(v2 > v1);
        assertFalse(m.replace("a", v1, list("stale")));
        assertEquals(list("1"), m.get("a").get().value());
        assertEquals(v2, m.get("a").get().version()); // a refused replace writes nothing
        assertTrue(m.replace("a", v2, list("2")));
        Versioned<ArrayList<String>> now = m.get("a").get();
        assertEquals(list("2"), now.value());
        assertTrue(now.version() > v2);
        assertFalse(m.replace("absent", now.version(), list("x")));
        assertEquals(Optional.empty(), m.get("absent"));
    }

    @Test
    public void removeAnswersTheRemovedValue() {
        MetronMap<String, ArrayList<String>> m = map();
        m.put("a", list("1"));
        assertEquals(Optional.of(list("1")), m.remove("a"));
        assertEquals(Optional.empty(), m.get("a"));
        assertTrue(m.putIfAbsent("a", list("again"))); // gone means absent
    }

    @Test
    public void valuesAreStoredNotShared() {
        MetronMap<String, ArrayList<String>> m = map();
        ArrayList<String> v = list("1");
        m.put("a", v);
        v.add("changed after the write");
        assertEquals(list("1"), m.get("a").get().value());
        m.get("a").get().value().add("changed after the read");
        assertEquals(list("1"), m.get("a").get().value());
    }

    @Test
    public void aValueTheNamespaceDoesNotRegisterIsRefusedAndNothingIsWritten() {
        MetronMap<String, Object> m = factory.map("contract-unregistered", NAMESPACE);
        assertThrows(RuntimeException.class, () -> m.put("a", new Unregistered()));
        assertEquals(Optional.empty(), m.get("a"));
    }

    /** A class no namespace registers. */
    private static final class Unregistered {
    }

    @Test
    public void theSnapshotIsEveryEntryAndStaysAsTaken() {
        MetronMap<String, ArrayList<String>> m = map();
        m.put("a", list("1"));
        m.put("b", list("2"));
        Map<String, ArrayList<String>> s = m.snapshot();
        assertEquals(Map.of("a", list("1"), "b", list("2")), s);
        m.remove("a");
        assertEquals(2, s.size());
        assertThrows(UnsupportedOperationException.class, () -> s.put("c", list("3")));
    }

    @Test
    public void theSameNameIsTheSameMap() {
        map().put("a", list("1"));
        assertEquals(list("1"), map().get("a").get().value());
        assertEquals(Optional.empty(), factory.map("contract-other", NAMESPACE).get("a"));
    }

    @Test
    public void listenersHearEveryWriteAndRemovalAppliedAndNothingElse() throws InterruptedException {
        MetronMap<String, ArrayList<String>> m = map();
        BlockingQueue<String> heard = new LinkedBlockingQueue<>();
        Consumer<String> l = k -> heard.add(k + "=" + m.get(k).map(v -> v.value().toString()).orElse("gone"));
        m.addListener(l);
        m.putIfAbsent("a", list("1"));
        m.putIfAbsent("a", list("refused"));
        m.put("b", list("2"));
        m.replace("a", 0, list("stale"));
        m.replace("a", m.get("a").get().version(), list("3"));
        m.remove("b");
        m.remove("absent");
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String k = heard.poll(EVENT_WAIT_MS, TimeUnit.MILLISECONDS);
            got.add(k);
        }
        assertEquals(List.of("a=[1]", "b=[2]", "a=[3]", "b=gone").size(), got.size());
        // heard after applied: each key's last event sees the map's last write to it
        assertEquals(List.of("a", "b", "a", "b"), got.stream().map(s -> s == null ? null : s.split("=")[0])
                .collect(java.util.stream.Collectors.toList()));
        assertNull(heard.poll(300, TimeUnit.MILLISECONDS)); // refused writes and absent removals are not events
        m.removeListener(l);
        m.put("c", list("4"));
        assertNull(heard.poll(300, TimeUnit.MILLISECONDS));
    }
}
