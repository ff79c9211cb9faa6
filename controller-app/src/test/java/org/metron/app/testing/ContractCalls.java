package org.metron.app.testing;

import com.google.protobuf.ByteString;
import org.metron.agent.v1.FiveTuple;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;

/** {@link AgentContract}'s ways to wait for a call and to build requests that need no agent at hand. */
final class ContractCalls {
    /** How long a call may take: generous, the shared build machine can be loaded far beyond its cores. */
    static final long WAIT_S = 30;

    private ContractCalls() {
    }

    static <T> T ok(CompletableFuture<T> f) throws Exception {
        return f.get(WAIT_S, TimeUnit.SECONDS);
    }

    /** The call's failure; fails the case when it succeeded or failed otherwise than with an AgentException. */
    static AgentException failure(CompletableFuture<?> f) throws Exception {
        try {
            Object v = f.get(WAIT_S, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure, got " + v);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AgentException) {
                return (AgentException) e.getCause();
            }
            throw new AssertionError("not an AgentException", e.getCause());
        }
    }

    static void assertFails(Code code, CompletableFuture<?> f) throws Exception {
        AgentException e = failure(f);
        assertEquals(e.getMessage(), code, e.code());
    }

    static ByteString ip(int a, int b, int c, int d) {
        return ByteString.copyFrom(new byte[]{(byte) a, (byte) b, (byte) c, (byte) d});
    }

    /** A NAPT mapping of UDP 10.0.0.1:srcPort -> 192.168.1.1:1000 to 10.9.9.9:mappedPort. */
    static FlowEntry flow(int srcPort, int mappedPort) {
        FiveTuple key = FiveTuple.newBuilder().setSrcIp(ip(10, 0, 0, 1)).setDstIp(ip(192, 168, 1, 1))
                .setSrcPort(srcPort).setDstPort(1000).setProto(17).build();
        return FlowEntry.newBuilder().setKey(key).setMapped(key.toBuilder().setSrcIp(ip(10, 9, 9, 9))
                .setSrcPort(mappedPort)).build();
    }

    static ImportStateRequest importOf(String pipeline, String group, boolean merge, FlowEntry... flows) {
        return ImportStateRequest.newBuilder().setSnapshot(StateSnapshot.newBuilder().setPipelineId(pipeline)
                .setGroupId(group).addTables(StateTable.newBuilder().setElement("rw").setKind("SynthRewriter")
                        .addAllEntries(List.of(flows)))).setMerge(merge).build();
    }

    static NicRuleBatch batch(NicRule... rules) {
        return NicRuleBatch.newBuilder().addAllRules(List.of(rules)).build();
    }
}
