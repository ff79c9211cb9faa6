package org.metron.app.testing;

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
import java.util.function.BooleanSupplier;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

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

    static ImportStateRequest importOf(String pipeline, String group, boolean merge, FlowEntry... flows) {
        return ImportStateRequest.newBuilder().setSnapshot(StateSnapshot.newBuilder().setPipelineId(pipeline)
                .setGroupId(group).addTables(StateTable.newBuilder().setElement("rw").setKind("SynthRewriter")
                        .addAllEntries(List.of(flows)))).setMerge(merge).build();
    }

    /** Waits up to {@link #WAIT_S} for {@code done}; fails the case when it never is. */
    static void waitFor(BooleanSupplier done) throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_S * 1000;
        while (!done.getAsBoolean()) {
            assertTrue("not within " + WAIT_S + " s", System.currentTimeMillis() < deadline);
            Thread.sleep(10);
        }
    }

    static NicRuleBatch batch(NicRule... rules) {
        return NicRuleBatch.newBuilder().addAllRules(List.of(rules)).build();
    }
}
