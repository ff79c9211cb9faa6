package org.metron.standin.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.atomix.core.map.AtomicMap;
import io.atomix.core.map.AtomicMapEventListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The cluster-wide part of the network configuration (core-dist's DistributedNetworkConfigStore, stand-in): every
 * config JSON applied or removed on a node is recorded in one Atomix map ("onos-network-configs", keyed by subject
 * class key, subject key and config key), and every other node applies the same JSON locally (through the same
 * validation, factories and pending configs), in the order recorded; a node that starts later catches up.
 */
final class SharedNetcfg {
    /** This node's store, applied to without recording again. */
    interface Local {
        void apply(String subjectClassKey, String subjectKey, String configKey, JsonNode json);

        void remove(String subjectClassKey, String subjectKey, String configKey);
    }

    private static final String SEP = "\n";
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final ObjectMapper mapper = new ObjectMapper();
    private final AtomicMap<String, byte[]> map;
    private final Local local;
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-netcfg"));
    private final ThreadLocal<Boolean> following = ThreadLocal.withInitial(() -> false);
    private final AtomicMapEventListener<String, byte[]> listener;

    SharedNetcfg(AtomicMap<String, byte[]> map, Local local) {
        this.map = map;
        this.local = local;
        this.listener = e -> executor.execute(() -> follow(e.key(), e.newValue() == null ? null
                : e.newValue().value()));
        map.addListener(listener);
        for (String key : map.keySet()) {
            executor.execute(() -> {
                io.atomix.utils.time.Versioned<byte[]> v = map.get(key);
                follow(key, v == null ? null : v.value());
            });
        }
    }

    void close() {
        map.removeListener(listener);
        executor.shutdownNow();
    }

    void put(String subjectClassKey, String subjectKey, String configKey, JsonNode json) {
        if (!following.get()) {
            try {
                map.put(String.join(SEP, subjectClassKey, subjectKey, configKey), mapper.writeValueAsBytes(json));
            } catch (IOException e) {
                throw new IllegalArgumentException(e);
            }
        }
    }

    void remove(String subjectClassKey, String subjectKey, String configKey) {
        if (!following.get()) {
            map.remove(String.join(SEP, subjectClassKey, subjectKey, configKey));
        }
    }

    private void follow(String key, byte[] json) {
        String[] k = key.split(SEP, 3);
        following.set(true);
        try {
            if (json == null) {
                local.remove(k[0], k[1], k[2]);
            } else {
                local.apply(k[0], k[1], k[2], mapper.readTree(json));
            }
        } catch (IOException | RuntimeException e) {
            log.warn("netcfg {} from the cluster not applied here: {}", key.replace(SEP, "/"), e.toString());
        } finally {
            following.set(false);
        }
    }
}
