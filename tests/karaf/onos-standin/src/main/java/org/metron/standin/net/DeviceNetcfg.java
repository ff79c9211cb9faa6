package org.metron.standin.net;

import org.onosproject.net.AnnotationKeys;
import org.onosproject.net.DefaultAnnotations;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.config.basics.BasicDeviceConfig;
import org.onosproject.net.config.basics.DeviceAnnotationConfig;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DeviceDescription;

/**
 * What core-net's BasicDeviceOperator and DeviceAnnotationOperator do to a provider's device description: netcfg
 * "basic" (type, driver, name, manufacturer, versions, serial, management address) and "annotations" win.
 */
final class DeviceNetcfg {
    private DeviceNetcfg() {
    }

    static DeviceDescription combine(NetworkConfigService netcfg, DeviceId id, DeviceDescription d) {
        BasicDeviceConfig basic = netcfg.getConfig(id, BasicDeviceConfig.class);
        DeviceAnnotationConfig extra = netcfg.getConfig(id, DeviceAnnotationConfig.class);
        if (basic == null && extra == null) {
            return d;
        }
        DefaultAnnotations.Builder a = DefaultAnnotations.builder();
        Device.Type type = d.type();
        String mfr = d.manufacturer();
        String hw = d.hwVersion();
        String sw = d.swVersion();
        String serial = d.serialNumber();
        if (basic != null) {
            type = basic.type() != null ? basic.type() : type;
            mfr = orElse(basic.manufacturer(), mfr);
            hw = orElse(basic.hwVersion(), hw);
            sw = orElse(basic.swVersion(), sw);
            serial = orElse(basic.serial(), serial);
            putIfSet(a, AnnotationKeys.DRIVER, basic.driver());
            putIfSet(a, AnnotationKeys.NAME, basic.name());
            putIfSet(a, AnnotationKeys.MANAGEMENT_ADDRESS, basic.managementAddress());
        }
        if (extra != null) {
            extra.annotations().forEach(a::set);
        }
        return new DefaultDeviceDescription(d.deviceUri(), type, mfr, hw, sw, serial, d.chassisId(),
                                            d.isDefaultAvailable(),
                                            DefaultAnnotations.union(d.annotations(), a.build()));
    }

    private static String orElse(String preferred, String other) {
        return preferred == null || preferred.isEmpty() ? other : preferred;
    }

    private static void putIfSet(DefaultAnnotations.Builder a, String key, String value) {
        if (value != null && !value.isEmpty()) {
            a.set(key, value);
        }
    }
}
