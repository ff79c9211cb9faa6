package org.metron.app.spi;

import com.google.common.collect.ImmutableList;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.TrafficTreatment;

import java.util.List;
import java.util.Objects;

/**
 * An OpenFlow 1.3 fast-failover group (OFPGT_FF) on one switch: the switch applies the first bucket whose watched
 * port is live, so traffic leaves a dead link for the backup path before any controller hears of the failure.
 * A flow rule sends to it by {@code group(id)} in its treatment.
 */
public final class FailoverGroup {
    private final DeviceId device;
    private final int id;
    private final List<Bucket> buckets;

    public FailoverGroup(DeviceId device, int id, List<Bucket> buckets) {
        if (buckets.size() < 2) {
            throw new IllegalArgumentException("a failover group needs a backup bucket: " + buckets);
        }
        this.device = Objects.requireNonNull(device);
        this.id = id;
        this.buckets = ImmutableList.copyOf(buckets);
    }

    public DeviceId device() {
        return device;
    }

    /** The group id on its device (OpenFlow group_id; ONOS GroupId). */
    public int id() {
        return id;
    }

    /** Buckets in preference order: the primary path's first. */
    public List<Bucket> buckets() {
        return buckets;
    }

    /** One bucket: its actions (set-fields and one output) and the port whose liveness selects it. */
    public static final class Bucket {
        private final PortNumber watchPort;
        private final TrafficTreatment treatment;

        public Bucket(PortNumber watchPort, TrafficTreatment treatment) {
            this.watchPort = Objects.requireNonNull(watchPort);
            this.treatment = Objects.requireNonNull(treatment);
        }

        public PortNumber watchPort() {
            return watchPort;
        }

        public TrafficTreatment treatment() {
            return treatment;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Bucket && ((Bucket) o).watchPort.equals(watchPort)
                    && ((Bucket) o).treatment.equals(treatment);
        }

        @Override
        public int hashCode() {
            return Objects.hash(watchPort, treatment);
        }

        @Override
        public String toString() {
            return "watch " + watchPort + " " + treatment.allInstructions();
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FailoverGroup && ((FailoverGroup) o).device.equals(device) && ((FailoverGroup) o).id == id
                && ((FailoverGroup) o).buckets.equals(buckets);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, id, buckets);
    }

    @Override
    public String toString() {
        return "ff group " + id + " on " + device + " " + buckets;
    }
}
