package org.metron.openflow;

import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFPacketIn;
import org.projectfloodlight.openflow.protocol.OFPortStatus;

/** Switch events, delivered on the switch's channel thread: implementations must not block. */
public interface OfSwitchListener {
    default void switchConnected(OfSwitch sw) {
    }

    default void switchDisconnected(OfSwitch sw) {
    }

    default void portStatus(OfSwitch sw, OFPortStatus status) {
    }

    default void flowRemoved(OfSwitch sw, OFFlowRemoved removed) {
    }

    /** A packet the switch sent to the controller (a flow rule's OUTPUT:CONTROLLER, e.g. ONOS's LLDP intercept). */
    default void packetIn(OfSwitch sw, OFPacketIn packetIn) {
    }
}
