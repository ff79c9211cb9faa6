package org.metron.app.spi;

import org.onosproject.net.DeviceId;

import java.util.Objects;

/** A device as the core sees it: id, role and how many flow rules it can hold in total (its table size). */
public final class NetworkDevice {
    private final DeviceId id;
    private final DeviceRole role;
    private final int ruleCapacity;

    /**
     * @param ruleCapacity rules the device holds at most (all tables Metron uses); 0 when not programmable
     */
    public NetworkDevice(DeviceId id, DeviceRole role, int ruleCapacity) {
        this.id = Objects.requireNonNull(id);
        this.role = Objects.requireNonNull(role);
        if (ruleCapacity < 0) {
            throw new IllegalArgumentException("rule capacity of " + id + " is negative: " + ruleCapacity);
        }
        this.ruleCapacity = ruleCapacity;
    }

    public DeviceId id() {
        return id;
    }

    public DeviceRole role() {
        return role;
    }

    public int ruleCapacity() {
        return ruleCapacity;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NetworkDevice && ((NetworkDevice) o).id.equals(id) && ((NetworkDevice) o).role == role
                && ((NetworkDevice) o).ruleCapacity == ruleCapacity;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, role, ruleCapacity);
    }

    @Override
    public String toString() {
        return id + "(" + role + ", " + ruleCapacity + " rules)";
    }
}
