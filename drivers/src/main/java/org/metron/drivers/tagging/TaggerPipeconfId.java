package org.metron.drivers.tagging;

import org.onosproject.net.pi.model.PiPipeconfId;

/**
 * The id under which the optional P4 app ({@code org.metron.drivers.p4}) registers the tagging pipeconf. It lives
 * here, in the drivers every Metron installation has, so the controller app recognizes a P4 tagger by its
 * pipeconf without depending on the P4 app (or on ONOS's P4Runtime apps) being installed.
 */
public final class TaggerPipeconfId {

    public static final PiPipeconfId ID = new PiPipeconfId("org.metron.tagger");

    private TaggerPipeconfId() {
    }
}
