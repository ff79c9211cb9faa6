package org.metron.synth;

import java.util.Locale;

/**
 * How the offload device marks a traffic-class group (docs/contracts.md#tags): the chain JSON's
 * {@code deployment.tagType}, the controller's tag allocator and its switch rules all use this one type.
 */
public enum TagType {
    /** dst MAC 02:4d:GG:GG:CC:CC, group tag 1..65535. */
    MAC(1, 0xFFFF),
    /** VLAN id = group tag 1..4094; dst MAC 02:4d:00:00:CC:CC. */
    VLAN(1, 4094);

    private final int min;
    private final int max;

    TagType(int min, int max) {
        this.min = min;
        this.max = max;
    }

    /** Smallest valid group tag. */
    public int min() {
        return min;
    }

    /** Largest valid group tag. */
    public int max() {
        return max;
    }

    /** The name chain JSON uses ("mac", "vlan"). */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
