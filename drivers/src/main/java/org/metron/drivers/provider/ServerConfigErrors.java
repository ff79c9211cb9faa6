package org.metron.drivers.provider;

import org.onosproject.net.DeviceId;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The {@code metron} server entries of netcfg that ONOS refused (their {@code isValid()} said no). ONOS itself
 * then answers the upload with 207 and a generic message, applies nothing and logs nothing, so this is where an
 * operator (through the app's REST, CLI or GUI) learns which device's entry was refused, which field and why.
 * Offered as an OSGi service by {@link MetronServerProvider}.
 */
public interface ServerConfigErrors {

    /** The latest refusal of each device whose entry has not been accepted since, oldest first. */
    List<Refused> refused();

    /** One refused entry. */
    final class Refused {
        private final DeviceId device;
        private final String field;
        private final String reason;
        private final Instant time;

        public Refused(DeviceId device, String field, String reason, Instant time) {
            this.device = Objects.requireNonNull(device, "device");
            this.field = Objects.requireNonNull(field, "field");
            this.reason = Objects.requireNonNull(reason, "reason");
            this.time = Objects.requireNonNull(time, "time");
        }

        /** The device the entry is for. */
        public DeviceId device() {
            return device;
        }

        /** The field at fault, as netcfg spells it under {@code metron} (e.g. {@code deadlineMs}, {@code nics.eth0}). */
        public String field() {
            return field;
        }

        /** What is wrong with it. */
        public String reason() {
            return reason;
        }

        /** When ONOS refused it. */
        public Instant time() {
            return time;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Refused)) {
                return false;
            }
            Refused r = (Refused) o;
            return device.equals(r.device) && field.equals(r.field) && reason.equals(r.reason) && time.equals(r.time);
        }

        @Override
        public int hashCode() {
            return Objects.hash(device, field, reason, time);
        }

        @Override
        public String toString() {
            return device + " " + MetronServerConfig.KEY + "." + field + ": " + reason + " (" + time + ")";
        }
    }
}
