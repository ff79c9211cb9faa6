package org.metron.app.impl;

import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The one way the controller waits for an agent (or switch) call: up to the step timeout, or up to the agent's
 * build deadline for a call that builds or fills a pipeline; a failure becomes a {@link MetronException} naming
 * the step. Also "remove if still present": an agent loses its pipelines and NIC rules when it restarts
 * (agent.proto, HealthReply.boot_id), so removing them afterwards answers NOT_FOUND, which for a removal is the
 * wanted end state, not a failure. An agent's refusal of this instance's owner token (ABORTED, agent.proto
 * owner_token; or not sent, {@link FencedAgent}) is NOT_LEADER: this instance no longer owns the chain and stops.
 */
public final class AgentCalls {
    private final Duration timeout;

    /** @param timeout how long one step (one agent call, one device batch) may take */
    public AgentCalls(Duration timeout) {
        this.timeout = Objects.requireNonNull(timeout);
    }

    /** The step timeout. */
    public Duration timeout() {
        return timeout;
    }

    /** Waits for an agent call up to the step timeout; its failure as AGENT_FAILURE naming {@code what}. */
    public <T> T await(CompletableFuture<T> f, String what) {
        return await(f, Fault.AGENT_FAILURE, what, timeout);
    }

    /** Waits for one step up to the step timeout; its failure as {@code fault} naming {@code what}. */
    public <T> T await(CompletableFuture<T> f, Fault fault, String what) {
        return await(f, fault, what, timeout);
    }

    /** {@link #await} of a call that builds or fills a pipeline on {@code agent}: waits for its build deadline. */
    public <T> T build(AgentClient agent, CompletableFuture<T> f, String what) {
        return build(agent, f, Fault.AGENT_FAILURE, what);
    }

    /** {@link #build(AgentClient, CompletableFuture, String)} failing as {@code fault}. */
    public <T> T build(AgentClient agent, CompletableFuture<T> f, Fault fault, String what) {
        return await(f, fault, what, buildWait(timeout, agent));
    }

    /**
     * How long to wait for a call of {@code agent} that builds or fills a pipeline: its build deadline (the call
     * has failed by then) and a second, or {@code step} if longer.
     */
    public static Duration buildWait(Duration step, AgentClient agent) {
        Duration d = agent.buildDeadline().plusSeconds(1);
        return d.compareTo(step) > 0 ? d : step;
    }

    private static <T> T await(CompletableFuture<T> f, Fault fault, String what, Duration wait) {
        try {
            return f.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetronException(fault, what + ": interrupted", e);
        } catch (TimeoutException e) {
            throw new MetronException(fault, what + " failed: no answer in " + wait.toMillis() + " ms", e);
        } catch (ExecutionException | RuntimeException e) {
            if (notOwner(e)) {
                throw new MetronException(Fault.NOT_LEADER, what + " failed, this instance no longer owns the chain: "
                        + message(e), cause(e));
            }
            throw new MetronException(fault, what + " failed: " + message(e), cause(e));
        }
    }

    /** {@code call}'s future; a call that throws instead of failing its future gives a failed future. */
    public static <T> CompletableFuture<T> started(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Why a wait of {@link #await} or {@link #build} failed (its exception's cause), worded as {@link #message}
     * words a future's failure: for a caller that names the step its own way. Any other failure: its message.
     */
    public static String reason(Throwable t) {
        return message(t instanceof MetronException && t.getCause() != null ? t.getCause() : t);
    }

    /** A future's failure as the message an operator should read. */
    public static String message(Throwable t) {
        Throwable c = cause(t);
        if (c instanceof TimeoutException) {
            return "no answer in time";
        }
        return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
    }

    private static Throwable cause(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    /** Whether a future's failure is the agent's NOT_FOUND. */
    public static boolean notFound(Throwable t) {
        Throwable c = cause(t);
        return c instanceof AgentException && ((AgentException) c).code() == AgentException.Code.NOT_FOUND;
    }

    /**
     * Whether a failure says this instance no longer owns the chain: the agent refused its owner token (ABORTED),
     * or {@link FencedAgent} did not send the request, or a step already said so (NOT_LEADER).
     */
    public static boolean notOwner(Throwable t) {
        Throwable c = cause(t);
        return c instanceof AgentException && ((AgentException) c).code() == AgentException.Code.ABORTED
                || c instanceof MetronException && ((MetronException) c).fault() == Fault.NOT_LEADER;
    }

    /** {@code removal}, succeeding when the agent no longer holds what it removes. */
    public static <T> CompletableFuture<Void> goneIsDone(CompletableFuture<T> removal) {
        return removal.handle((v, e) -> {
            if (e != null && !notFound(e)) {
                throw e instanceof CompletionException ? (CompletionException) e : new CompletionException(e);
            }
            return null;
        });
    }

    /** Removes pipeline {@code id} from {@code agent} if it still runs there. */
    public static CompletableFuture<Void> removePipelinePresent(AgentClient agent, String id) {
        return goneIsDone(agent.removePipeline(id));
    }

    /**
     * Removes the NIC rules among {@code ids} the agent holds. The agent rejects a whole batch naming an unknown
     * id (and removes nothing), so after a NOT_FOUND the ids are removed one by one, each absent one skipped.
     */
    public static CompletableFuture<Void> removeNicRulesPresent(AgentClient agent, Collection<Long> ids) {
        return agent.removeNicRules(ids).handle((v, e) -> e).thenCompose(e -> {
            if (e == null) {
                return CompletableFuture.completedFuture(null);
            }
            if (!notFound(e)) {
                return CompletableFuture.failedFuture(e);
            }
            CompletableFuture<?>[] each = ids.stream().map(id -> goneIsDone(agent.removeNicRules(List.of(id))))
                    .toArray(CompletableFuture[]::new);
            return CompletableFuture.allOf(each);
        });
    }
}
