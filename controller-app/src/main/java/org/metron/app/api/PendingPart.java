package org.metron.app.api;

import org.onosproject.net.DeviceId;

import java.util.Objects;

/**
 * A part of a chain on one device that is not as the operator asked: for a {@link ChainState#DEGRADED} chain, what
 * does not run (its pipeline and NIC rules on a lost server); for a {@link ChainState#REMOVING} chain, what is
 * still installed and could not be removed yet (e.g. "pipeline web", "12 switch rules"), with why. Shown as
 * {@code pending} in REST (docs/contracts.md), the CLI and the GUI.
 */
public final class PendingPart {
    private final DeviceId device;
    private final String what;
    private final String why;

    public PendingPart(DeviceId device, String what, String why) {
        this.device = Objects.requireNonNull(device, "device");
        this.what = Objects.requireNonNull(what, "what");
        this.why = why == null ? "" : why;
    }

    /** The device (server or switch) the part is on. */
    public DeviceId device() {
        return device;
    }

    /** The part: "pipeline web", "NIC rules [3, 4]", "12 switch rules". */
    public String what() {
        return what;
    }

    /** Why it is pending: the error met, or "server unavailable". */
    public String why() {
        return why;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof PendingPart)) {
            return false;
        }
        PendingPart p = (PendingPart) o;
        return device.equals(p.device) && what.equals(p.what) && why.equals(p.why);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, what, why);
    }

    @Override
    public String toString() {
        return what + " on " + device + (why.isEmpty() ? "" : " (" + why + ")");
    }
}
