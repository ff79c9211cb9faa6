package org.metron.drivers.server;

import org.metron.agent.v1.HealthReply;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceAgentListener;
import org.onosproject.net.provider.ProviderId;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One {@link AgentClient} per Metron server device, shared by the driver's behaviours and the controller app,
 * so every part of ONOS talks to an agent over the same channel.
 */
public interface AgentClientService {

    /**
     * The client of a server; connects on first use to the endpoint set for it, or else the plain-text one
     * its device id names.
     *
     * @throws IllegalArgumentException when the device is not a Metron server
     */
    AgentClient client(DeviceId device);

    /** Sets how to reach a server (TLS, deadline); an existing client to it is closed and replaced. */
    void setEndpoint(DeviceId device, AgentEndpoint endpoint);

    /** Forgets a server and closes its client. */
    void remove(DeviceId device);

    /** True when a client to the server exists (it may still be reconnecting). */
    boolean hasClient(DeviceId device);

    /** True when the client's channel to the server is connected right now; never blocks. */
    boolean isReady(DeviceId device);

    /**
     * Whether the server's agent serves now, by one Health call that is never retried and fails fast: a dead
     * agent's refused connection answers false at once, a live agent has the endpoint's deadline to answer.
     * Never completes exceptionally.
     */
    default CompletableFuture<Boolean> ping(DeviceId device) {
        return client(device).health().thenApply(HealthReply::getServing).exceptionally(t -> false);
    }

    /**
     * Runs {@code onChange} on every connectivity change of the server's channel, of its present client and of
     * those made later, told whether the channel is connected (on a gRPC thread: it must not block). One watcher
     * per server; null removes it.
     */
    default void watchConnectivity(DeviceId device, Consumer<Boolean> onChange) {
    }

    // Mastership, for ONOS's device handshake. Agents have no arbitration of their own (any instance may program
    // them, one acts per chain), so the role ONOS asks for is the role this instance has.

    MastershipRole role(DeviceId device);

    /** Records the role and tells the device's agent listeners (ROLE_MASTER, ROLE_STANDBY or ROLE_NONE). */
    void setRole(DeviceId device, MastershipRole role);

    void addListener(DeviceId device, ProviderId provider, DeviceAgentListener listener);

    void removeListener(DeviceId device, ProviderId provider);
}
