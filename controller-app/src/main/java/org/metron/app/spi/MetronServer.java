package org.metron.app.spi;

import com.google.common.collect.ImmutableMap;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A Metron server: its device id, a connected client for its agent, and where each of its NICs is cabled.
 * The registry owns the client's lifecycle; the core never closes it.
 */
public final class MetronServer {
    private final DeviceId id;
    private final AgentClient agent;
    private final Map<String, ConnectPoint> attachments;

    /**
     * @param attachments agent-local NIC name → the switch port that NIC is cabled to (where traffic toward
     *                    the NIC leaves the network); NICs not cabled to a switch are absent
     */
    public MetronServer(DeviceId id, AgentClient agent, Map<String, ConnectPoint> attachments) {
        this.id = Objects.requireNonNull(id);
        this.agent = Objects.requireNonNull(agent);
        this.attachments = ImmutableMap.copyOf(attachments);
    }

    public DeviceId id() {
        return id;
    }

    public AgentClient agent() {
        return agent;
    }

    public Map<String, ConnectPoint> attachments() {
        return attachments;
    }

    public Optional<ConnectPoint> attachment(String nic) {
        return Optional.ofNullable(attachments.get(nic));
    }

    @Override
    public String toString() {
        return id + "@" + agent.target();
    }
}
