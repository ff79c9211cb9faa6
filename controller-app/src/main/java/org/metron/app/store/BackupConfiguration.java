package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;

/**
 * Precomputed fallbacks for a chain (paper §routing changes): other programmable devices on the ingress→server
 * path that could take the chain's offload rules if the chosen one fails, in path order, with the target
 * profile each would use; and, per device holding the chain's switch rules, the complete {@link FailoverBackup}
 * for that device failing (computed in the background after every change). Kept in the distributed store so any
 * instance can fail over by a lookup.
 */
public final class BackupConfiguration {
    private final ChainId chainId;
    private final List<DeviceId> devices;
    private final List<String> profiles;
    private final Map<DeviceId, FailoverBackup> failovers;

    public BackupConfiguration(ChainId chainId, List<DeviceId> devices, List<String> profiles) {
        this(chainId, devices, profiles, Map.of());
    }

    public BackupConfiguration(ChainId chainId, List<DeviceId> devices, List<String> profiles,
                               Map<DeviceId, FailoverBackup> failovers) {
        if (devices.size() != profiles.size()) {
            throw new IllegalArgumentException("one profile per backup device: " + devices + " vs " + profiles);
        }
        this.chainId = Objects.requireNonNull(chainId);
        this.devices = ImmutableList.copyOf(devices);
        this.profiles = ImmutableList.copyOf(profiles);
        this.failovers = ImmutableMap.copyOf(failovers);
    }

    /** The same alternatives with these precomputed failovers. */
    public BackupConfiguration withFailovers(Map<DeviceId, FailoverBackup> backups) {
        return new BackupConfiguration(chainId, devices, profiles, backups);
    }

    /** The precomputed answer to {@code device} failing, if one was computed. */
    public Optional<FailoverBackup> failover(DeviceId device) {
        return Optional.ofNullable(failovers.get(device));
    }

    public Map<DeviceId, FailoverBackup> failovers() {
        return failovers;
    }

    public ChainId chainId() {
        return chainId;
    }

    public List<DeviceId> devices() {
        return devices;
    }

    public List<String> profiles() {
        return profiles;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BackupConfiguration && ((BackupConfiguration) o).chainId.equals(chainId)
                && ((BackupConfiguration) o).devices.equals(devices)
                && ((BackupConfiguration) o).profiles.equals(profiles)
                && ((BackupConfiguration) o).failovers.equals(failovers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, devices, profiles);
    }
}
