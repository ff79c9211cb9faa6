package org.metron.app.onos;

import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.NetworkDevice;
import org.metron.drivers.tagging.TaggerPipeconfId;
import org.metron.drivers.server.MetronDeviceIds;
import org.metron.synth.TargetProfile;
import org.onosproject.net.Device;
import org.onosproject.net.pi.model.PiPipeconfId;

import java.util.Optional;

/**
 * Decides what an ONOS device is to Metron. Operators may override with the device annotations
 * {@value #ROLE} (openflow | p4tagger | server | other) and {@value #CAPACITY} (rules).
 */
final class DeviceRoles {
    static final String ROLE = "metronRole";
    static final String CAPACITY = "metronRuleCapacity";

    private DeviceRoles() {
    }

    static NetworkDevice of(Device d, Optional<PiPipeconfId> pipeconf) {
        DeviceRole role = role(d, pipeconf);
        String cap = d.annotations().value(CAPACITY);
        int capacity = cap != null ? Integer.parseInt(cap) : defaultCapacity(role);
        return new NetworkDevice(d.id(), role, capacity);
    }

    private static DeviceRole role(Device d, Optional<PiPipeconfId> pipeconf) {
        String explicit = d.annotations().value(ROLE);
        if (explicit != null) {
            switch (explicit) {
                case "openflow":
                    return DeviceRole.OPENFLOW_SWITCH;
                case "p4tagger":
                    return DeviceRole.P4_TAGGER;
                case "server":
                    return DeviceRole.SERVER;
                default:
                    return DeviceRole.OTHER;
            }
        }
        if (MetronDeviceIds.isMetronServer(d.id())) {
            return DeviceRole.SERVER;
        }
        if (pipeconf.map(TaggerPipeconfId.ID::equals).orElse(false)) {
            return DeviceRole.P4_TAGGER;
        }
        if (d.type() == Device.Type.SWITCH && "of".equals(d.id().uri().getScheme())) {
            return DeviceRole.OPENFLOW_SWITCH;
        }
        return DeviceRole.OTHER;
    }

    private static int defaultCapacity(DeviceRole role) {
        switch (role) {
            case OPENFLOW_SWITCH:
                return TargetProfile.OPENFLOW13.capacity();
            case P4_TAGGER:
                return TargetProfile.P4_TAGGER.capacity();
            default:
                return 0;
        }
    }
}
