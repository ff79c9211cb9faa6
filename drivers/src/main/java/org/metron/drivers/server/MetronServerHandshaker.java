package org.metron.drivers.server;

import org.metron.agent.v1.HealthReply;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceAgentListener;
import org.onosproject.net.device.DeviceHandshaker;
import org.onosproject.net.provider.ProviderId;

import java.util.concurrent.CompletableFuture;

/**
 * Lets ONOS's device providers manage a Metron server: connection through the shared
 * {@link AgentClientService}, reachability by the agent's Health RPC, mastership granted as asked (agents have
 * no arbitration of their own).
 */
public class MetronServerHandshaker extends AbstractMetronBehaviour implements DeviceHandshaker {

    private AgentClientService agents() {
        return handler().get(AgentClientService.class);
    }

    @Override
    public boolean connect() {
        agent();
        return true;
    }

    @Override
    public boolean hasConnection() {
        return agents().hasClient(deviceId());
    }

    @Override
    public void disconnect() {
        agents().remove(deviceId());
    }

    /** Channel connected now; never blocks (use {@link #probeReachability()} to ask the agent). */
    @Override
    public boolean isReachable() {
        return agents().isReady(deviceId());
    }

    @Override
    public CompletableFuture<Boolean> probeReachability() {
        return agent().health().thenApply(HealthReply::getServing).exceptionally(t -> false);
    }

    @Override
    public boolean isAvailable() {
        return isReachable();
    }

    @Override
    public CompletableFuture<Boolean> probeAvailability() {
        return probeReachability();
    }

    @Override
    public void roleChanged(MastershipRole newRole) {
        agents().setRole(deviceId(), newRole);
    }

    @Override
    public MastershipRole getRole() {
        return agents().role(deviceId());
    }

    @Override
    public void addDeviceAgentListener(ProviderId providerId, DeviceAgentListener listener) {
        agents().addListener(deviceId(), providerId, listener);
    }

    @Override
    public void removeDeviceAgentListener(ProviderId providerId) {
        agents().removeListener(deviceId(), providerId);
    }
}
