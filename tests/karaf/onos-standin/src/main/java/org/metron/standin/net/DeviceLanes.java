package org.metron.standin.net;

import org.onosproject.net.DeviceId;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One thread per device for the flow subsystem's work: a device's batches (and its provider's reports) run in the
 * order they were asked, different devices' side by side. ONOS 2.7's FlowRuleManager hands each device's batch of a
 * stage to its {@code deviceInstallers} pool (32 threads) and runs operations on its {@code operationsService}
 * pool (32), and ECFlowRuleStore's master handles forwarded batches on its message-handling pool: no device waits
 * for another's. Before, one thread ran every batch in turn, so the second device of a chain's commit waited for
 * the first's (its flow mods, barrier and store writes: 90 ms of a failover's 212 ms of commits in the 3-node Karaf
 * test); keeping each device in order is what the single thread gave a device, and what ONOS's master gives the
 * batches one node sends it.
 */
final class DeviceLanes {
    private final String name;
    private final Map<DeviceId, ExecutorService> lanes = new ConcurrentHashMap<>();
    private volatile boolean closed;

    DeviceLanes(String name) {
        this.name = name;
    }

    /** The device's lane (made on first use). */
    Executor of(DeviceId device) {
        if (closed) {
            throw new java.util.concurrent.RejectedExecutionException(name + " closed");
        }
        return lanes.computeIfAbsent(device, d -> Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name + "-" + d);
            t.setDaemon(true);
            return t;
        }));
    }

    void close() {
        closed = true;
        lanes.values().forEach(ExecutorService::shutdownNow);
    }
}
