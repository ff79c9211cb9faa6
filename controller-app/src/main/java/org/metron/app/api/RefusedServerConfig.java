package org.metron.app.api;

import org.onosproject.net.DeviceId;

import java.time.Instant;
import java.util.Objects;

/**
 * A server's {@code metron} netcfg entry that ONOS refused (its {@code isValid()} said no): which device, which
 * field under {@code metron} (e.g. {@code deadlineMs}, {@code nics.eth0}), why, and when. ONOS answers such an
 * upload with 207 and applies nothing; Metron lists the refusal (REST {@code GET /servers} {@code refusedConfigs},
 * CLI {@code metron-servers}, GUI Problems table) until the device's entry is accepted.
 */
public final class RefusedServerConfig {
    private final DeviceId device;
    private final String field;
    private final String reason;
    private final Instant time;

    public RefusedServerConfig(DeviceId device, String field, String reason, Instant time) {
        this.device = Objects.requireNonNull(device, "device");
        this.field = Objects.requireNonNull(field, "field");
        this.reason = Objects.requireNonNull(reason, "reason");
        this.time = Objects.requireNonNull(time, "time");
    }

    public DeviceId device() {
        return device;
    }

    /** The field at fault, as netcfg spells it under {@code metron}. */
    public String field() {
        return field;
    }

    public String reason() {
        return reason;
    }

    /** When ONOS refused it. */
    public Instant time() {
        return time;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RefusedServerConfig)) {
            return false;
        }
        RefusedServerConfig r = (RefusedServerConfig) o;
        return device.equals(r.device) && field.equals(r.field) && reason.equals(r.reason) && time.equals(r.time);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, field, reason, time);
    }

    @Override
    public String toString() {
        return device + " metron." + field + ": " + reason + " (" + time + ")";
    }
}
