package org.metron.app.api;

import org.onosproject.net.DeviceId;

import java.util.Map;

/**
 * Draining a server for planned work on it (an agent upgrade or restart, maintenance), as Kubernetes drains a node
 * (docs/failover.md#planned-restart-drain): every chain and group on it moves to other servers hitless (flow state
 * carried, traffic moved at the switches in one batch per device), and nothing is placed, scaled out or failed over
 * to it until it is undrained. REST ({@code POST /servers/{id}/drain}, {@code .../undrain}), the ONOS CLI and the
 * embedded host's CLI are thin shells over it; one implementation, {@code org.metron.app.scaling.ServerDrain}.
 */
public interface DrainService {
    /**
     * Drains a server: records it drained, then moves off it every group scaled out to it (merged back into its
     * chain's server) and every chain whose server it is (make-before-break to a server placement chooses among
     * the others). Draining a drained server moves what is still on it.
     *
     * @return what moved where
     * @throws MetronException INVALID_REQUEST for a server not registered; IMPOSSIBLE_PLACEMENT
     *                         (no other server could take what runs on it: nothing was moved, the server is not
     *                         drained) naming what and why; a move that failed half way names what moved before it
     *                         (those stay moved, hitless), what failed and why: the failed one runs on untouched and
     *                         the server is not drained
     */
    DrainReport drain(DeviceId server);

    /**
     * Makes a drained server eligible again; with {@code moveBack}, the chains the drain moved off it come back
     * to it (make-before-break, as they left).
     *
     * @throws MetronException INVALID_REQUEST for a server not drained; a move back that fails names it (the chain
     *                         runs on where it was; the server stays undrained)
     */
    DrainReport undrain(DeviceId server, boolean moveBack);

    /** The drained servers, each with when it was drained (ms since the epoch). */
    Map<DeviceId, Long> drained();
}
