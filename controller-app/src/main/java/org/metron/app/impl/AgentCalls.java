package org.metron.app.impl;

import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Agent calls whose outcome depends on what the agent still holds. An agent loses its pipelines and NIC rules
 * when it restarts (agent.proto, HealthReply.boot_id), so removing them afterwards answers NOT_FOUND: for a
 * removal that is the wanted end state, not a failure.
 */
final class AgentCalls {
    private AgentCalls() {
    }

    /** Whether a future's failure is the agent's NOT_FOUND. */
    static boolean notFound(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c instanceof AgentException && ((AgentException) c).code() == AgentException.Code.NOT_FOUND;
    }

    /** {@code removal}, succeeding when the agent no longer holds what it removes. */
    static <T> CompletableFuture<Void> goneIsDone(CompletableFuture<T> removal) {
        return removal.handle((v, e) -> {
            if (e != null && !notFound(e)) {
                throw e instanceof CompletionException ? (CompletionException) e : new CompletionException(e);
            }
            return null;
        });
    }

    /**
     * Removes the NIC rules among {@code ids} the agent holds. The agent rejects a whole batch naming an unknown
     * id (and removes nothing), so after a NOT_FOUND the ids are removed one by one, each absent one skipped.
     */
    static CompletableFuture<Void> removeNicRulesPresent(AgentClient agent, Collection<Long> ids) {
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
