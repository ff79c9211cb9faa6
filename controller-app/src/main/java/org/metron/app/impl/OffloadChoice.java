package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;

import java.util.List;

/**
 * The offload device picked on the ingress→server path, the chain compiled for its profile, the path itself
 * and the other devices that could take over (backups).
 */
public final class OffloadChoice {
    private final DeviceId device;
    private final TargetProfile profile;
    private final CompiledChain compiled;
    private final List<Link> path;
    private final int position;
    private final List<DeviceId> backups;
    private final List<String> backupProfiles;

    OffloadChoice(DeviceId device, TargetProfile profile, CompiledChain compiled, List<Link> path, int position,
                  List<DeviceId> backups, List<String> backupProfiles) {
        this.device = device;
        this.profile = profile;
        this.compiled = compiled;
        this.path = ImmutableList.copyOf(path);
        this.position = position;
        this.backups = ImmutableList.copyOf(backups);
        this.backupProfiles = ImmutableList.copyOf(backupProfiles);
    }

    public DeviceId device() {
        return device;
    }

    public TargetProfile profile() {
        return profile;
    }

    public CompiledChain compiled() {
        return compiled;
    }

    /** Links from the ingress point to the server NIC's switch port. */
    public List<Link> path() {
        return path;
    }

    /** Index of the offload device among the path's devices (0 = the ingress device). */
    public int position() {
        return position;
    }

    public List<DeviceId> backups() {
        return backups;
    }

    public List<String> backupProfiles() {
        return backupProfiles;
    }
}
