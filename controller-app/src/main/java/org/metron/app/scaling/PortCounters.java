package org.metron.app.scaling;

import org.onosproject.net.DeviceId;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A switch's per-port receive counters, from whatever southbound the host has (ONOS's DeviceService, the
 * embedded host's OpenFlow connections): what {@link IngressWatch} reads.
 */
public interface PortCounters {
    /**
     * Packets each port of {@code device} has received so far, by port number.
     *
     * @return fails when the device is not connected or does not answer
     */
    CompletableFuture<Map<Long, Long>> rxPackets(DeviceId device);
}
