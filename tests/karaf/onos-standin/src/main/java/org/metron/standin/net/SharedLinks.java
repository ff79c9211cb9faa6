package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import io.atomix.core.map.AtomicMap;
import io.atomix.core.map.AtomicMapEventListener;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.store.serializers.KryoNamespaces;
import org.onosproject.store.service.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The cluster-wide link store (as core-dist's GossipLinkStore / ECLinkStore share theirs in ONOS): a link a
 * provider of any node reports (the Metron server provider reports a server's links from its master only) is
 * written to one Atomix map ("onos-links", keyed by "src>dst", values Kryo-encoded DefaultLinks), a vanished one
 * removed; every node keeps the map's links ({@link #declared}) and shows those whose end devices are available
 * to it ({@link LinkManagerStandin}), so a link reported before a node learnt its devices shows up once they come.
 */
final class SharedLinks {
    private static final Serializer SERIALIZER = Serializer.using(KryoNamespaces.API);
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final AtomicMap<String, byte[]> map;
    private final Map<String, Link> declared = new ConcurrentHashMap<>();
    private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-linkstore"));
    private final ExecutorService follower = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-linksync"));
    private final AtomicMapEventListener<String, byte[]> listener;

    /**
     * @param added   applies a link of the map here
     * @param removed removes a link the map lost here
     */
    SharedLinks(AtomicMap<String, byte[]> map, Consumer<Link> added, Consumer<LinkKey> removed) {
        this.map = map;
        this.listener = e -> follower.execute(() -> {
            try {
                if (e.newValue() == null) {
                    Link old = declared.remove(e.key());
                    if (old != null) {
                        removed.accept(LinkKey.linkKey(old.src(), old.dst()));
                    }
                } else {
                    Link l = SERIALIZER.decode(e.newValue().value());
                    declared.put(e.key(), l);
                    added.accept(l);
                }
            } catch (RuntimeException x) {
                log.warn("link {} from the cluster not applied here: {}", e.key(), x.toString());
            }
        });
        map.addListener(listener);
        follower.execute(() -> map.entrySet().forEach(e -> {
            Link l = SERIALIZER.decode(e.getValue().value());
            declared.put(e.getKey(), l);
            added.accept(l);
        }));
    }

    private static String key(LinkKey k) {
        return k.src() + ">" + k.dst();
    }

    void close() {
        map.removeListener(listener);
        writer.shutdownNow();
        follower.shutdownNow();
    }

    /** Links of the cluster (reported and not vanished). */
    Collection<Link> declared() {
        return ImmutableList.copyOf(declared.values());
    }

    void put(Link link) {
        byte[] v = SERIALIZER.encode(link);
        writer.execute(() -> run(() -> map.put(key(LinkKey.linkKey(link.src(), link.dst())), v)));
    }

    void remove(LinkKey k) {
        writer.execute(() -> run(() -> map.remove(key(k))));
    }

    private void run(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            log.warn("link store write failed: {}", e.toString());
        }
    }
}
