package org.metron.app.api;

/** How the offload device marks a traffic-class group (docs/contracts.md#tags). */
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
}
