package org.metron.drivers.provider;

import org.onosproject.net.DeviceId;

/** A {@code metron} server netcfg entry is refused: names the device and the field at fault. */
public class InvalidServerConfigException extends IllegalArgumentException {

    private final transient DeviceId device;
    private final String field;

    InvalidServerConfigException(DeviceId device, String field, String message, Throwable cause) {
        super(device + ": " + message, cause);
        this.device = device;
        this.field = field;
    }

    InvalidServerConfigException(DeviceId device, String field, String message) {
        this(device, field, message, null);
    }

    public DeviceId device() {
        return device;
    }

    /** The field under {@code metron} ({@code id} when the device id itself is not a Metron server's). */
    public String field() {
        return field;
    }

    /** The message without the device prefix. */
    public String reason() {
        String m = getMessage();
        String prefix = device + ": ";
        return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
    }
}
