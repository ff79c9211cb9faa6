package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.List;

/**
 * Told by {@link ChainManager#serverLost} that a server is gone for good, for the parts of chains placed on other
 * servers that ran on it: the groups scaling placed there (docs/scaling.md#scale-out). Scaling implements it, so
 * the chain manager calls into scaling without depending on it (both hosts register it with
 * {@link ChainManager#onServerLost}).
 */
@FunctionalInterface
public interface ServerLoss {
    /** None: a host without scaling. */
    ServerLoss NONE = server -> List.of();

    /**
     * Brings back what the chains this instance leads had on {@code server} (their own servers are others).
     *
     * @return the chains changed
     */
    List<ChainId> serverLost(DeviceId server);
}
