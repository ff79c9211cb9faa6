package org.metron.app.spi;

/** What a network device can do for Metron. Decides which synthesizer target profile its rules are built for. */
public enum DeviceRole {
    /** OpenFlow 1.3 switch: matches L2-L4, writes dst MAC/VLAN, forwards. */
    OPENFLOW_SWITCH,
    /** P4Runtime switch running Metron's tagging program. */
    P4_TAGGER,
    /** A Metron server (its NICs are the device's ports). */
    SERVER,
    /** Anything else: carries traffic, is never programmed by Metron. */
    OTHER;

    /** Whether Metron may install offload rules on such a device. */
    public boolean programmable() {
        return this == OPENFLOW_SWITCH || this == P4_TAGGER;
    }
}
