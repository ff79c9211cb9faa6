package org.metron.app.testing;

import com.google.protobuf.ByteString;
import org.metron.agent.v1.FiveTuple;
import org.metron.agent.v1.FlowEntry;

/** NAPT flow-table entries (agent.proto FlowEntry) for tests that fill or read an agent's SynthRewriter. */
public final class NaptFlows {
    private NaptFlows() {
    }

    /** An IPv4 address in network order, as FiveTuple carries it. */
    public static ByteString ip(int a, int b, int c, int d) {
        return ByteString.copyFrom(new byte[]{(byte) a, (byte) b, (byte) c, (byte) d});
    }

    /** A mapping of UDP 10.0.0.1:srcPort -> 192.168.1.1:1000 to 10.9.9.9:mappedPort. */
    public static FlowEntry flow(int srcPort, int mappedPort) {
        FiveTuple key = FiveTuple.newBuilder().setSrcIp(ip(10, 0, 0, 1)).setDstIp(ip(192, 168, 1, 1))
                .setSrcPort(srcPort).setDstPort(1000).setProto(17).build();
        return FlowEntry.newBuilder().setKey(key).setMapped(key.toBuilder().setSrcIp(ip(10, 9, 9, 9))
                .setSrcPort(mappedPort)).build();
    }
}
