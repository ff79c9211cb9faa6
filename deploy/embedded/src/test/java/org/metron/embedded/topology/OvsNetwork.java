package org.metron.embedded.topology;

import org.junit.Assume;
import org.metron.openflow.OpenFlowController;
import org.projectfloodlight.openflow.types.DatapathId;

import java.net.InetSocketAddress;
import java.nio.file.Path;

/**
 * A topology emulated with real Open vSwitch bridges, its switches connected to an OpenFlow controller of the test's
 * own: what the tests against real switches set up before their class (skipped without root and OVS).
 */
public final class OvsNetwork implements AutoCloseable {
    public final OpenFlowController openflow;
    public final EmulatedNetwork net;

    private OvsNetwork(OpenFlowController openflow, EmulatedNetwork net) {
        this.openflow = openflow;
        this.net = net;
    }

    /** Brings {@code topology} up and waits for its switches (datapath ids 1 to {@code switches}). */
    public static OvsNetwork up(String topology, int switches, Path runRoot) throws Exception {
        Assume.assumeTrue("needs root and OVS", EmulatedNetwork.available());
        OpenFlowController openflow = OpenFlowController.listen(new InetSocketAddress("127.0.0.1", 0), 5000);
        EmulatedNetwork net;
        try {
            net = EmulatedNetwork.up(topology, openflow.port(), runRoot);
        } catch (Exception e) {
            openflow.close();
            throw e;
        }
        OvsNetwork up = new OvsNetwork(openflow, net);
        for (int dpid = 1; dpid <= switches; dpid++) {
            openflow.await(DatapathId.of(dpid), 15_000);
        }
        return up;
    }

    /** Closes what {@code up} brought up (null: nothing was). */
    public static void down(OvsNetwork n) throws Exception {
        if (n != null) {
            n.close();
        }
    }

    @Override
    public void close() throws Exception {
        net.close();
        openflow.close();
    }
}
