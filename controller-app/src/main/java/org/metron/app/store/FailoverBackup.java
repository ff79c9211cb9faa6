package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.Placement;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A chain's precomputed answer to one device failing (paper: backup configurations, so failover is a lookup, not
 * a computation): the placement the chain moves to and every switch rule of it, computed for the placement
 * {@link #basis()} the chain had then. It fits only while the chain still has that placement.
 */
public final class FailoverBackup {
    private final DeviceId failed;
    private final Placement basis;
    private final Placement moved;
    private final List<InstalledRule> switchRules;

    public FailoverBackup(DeviceId failed, Placement basis, Placement moved, List<InstalledRule> switchRules) {
        this.failed = Objects.requireNonNull(failed);
        this.basis = Objects.requireNonNull(basis);
        this.moved = Objects.requireNonNull(moved);
        this.switchRules = ImmutableList.copyOf(switchRules);
    }

    /** The device whose failure this answers. */
    public DeviceId failed() {
        return failed;
    }

    /** The placement the backup was computed for. */
    public Placement basis() {
        return basis;
    }

    /** The placement after failing over (other offload device or path; same server, groups and tags). */
    public Placement moved() {
        return moved;
    }

    /** Every switch rule after failing over, in install order (offload device last). */
    public List<InstalledRule> switchRules() {
        return switchRules;
    }

    /** The rules per device, devices in install order. */
    public Map<DeviceId, List<InstalledRule>> switchRulesByDevice() {
        Map<DeviceId, List<InstalledRule>> out = new LinkedHashMap<>();
        switchRules.forEach(r -> out.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r));
        return out;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FailoverBackup)) {
            return false;
        }
        FailoverBackup b = (FailoverBackup) o;
        return failed.equals(b.failed) && basis.equals(b.basis) && moved.equals(b.moved)
                && switchRules.equals(b.switchRules);
    }

    @Override
    public int hashCode() {
        return Objects.hash(failed, basis, moved, switchRules.size());
    }
}
