package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;

/**
 * Precomputed fallbacks for a chain (paper §routing changes): other programmable devices on the ingress→server
 * path that could take the chain's offload rules if the chosen one fails, in path order, with the target
 * profile each would use. Kept in the distributed store so any instance can fail over.
 */
public final class BackupConfiguration {
    private final ChainId chainId;
    private final List<DeviceId> devices;
    private final List<String> profiles;

    public BackupConfiguration(ChainId chainId, List<DeviceId> devices, List<String> profiles) {
        if (devices.size() != profiles.size()) {
            throw new IllegalArgumentException("one profile per backup device: " + devices + " vs " + profiles);
        }
        this.chainId = Objects.requireNonNull(chainId);
        this.devices = ImmutableList.copyOf(devices);
        this.profiles = ImmutableList.copyOf(profiles);
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
                && ((BackupConfiguration) o).profiles.equals(profiles);
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, devices, profiles);
    }
}
