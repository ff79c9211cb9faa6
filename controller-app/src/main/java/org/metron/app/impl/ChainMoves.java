package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport.Move;
import org.onosproject.net.DeviceId;

import java.util.Optional;

/**
 * Moves a running chain to another server with its definition unchanged, make-before-break (the new placement
 * beside the old, flow state carried, traffic moved at the switches in one batch per device, then the old one
 * retired): what a server drain does to the chains whose server it is (docs/failover.md#planned-restart-drain).
 * Implemented by {@link ChainManager}; the ONOS component offers it to the drain.
 */
@FunctionalInterface
public interface ChainMoves {
    /**
     * @param to  the server to move to; empty: wherever placement puts it (never a drained server)
     * @param why begins the chain's reason
     * @return the move: from the server the chain ran on to the one it runs on (ACTIVE), the chain's reason after it
     * @throws org.metron.app.api.MetronException when it cannot move (the chain runs on untouched); NOT_LEADER from
     *                                            {@link ChainManager} on an instance that does not own the chain
     *                                            (ScalingService#move asks the owner)
     */
    Move move(ChainId chain, Optional<DeviceId> to, String why);
}
