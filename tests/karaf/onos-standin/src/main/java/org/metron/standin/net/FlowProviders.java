package org.metron.standin.net;

import com.google.common.collect.ImmutableSet;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.CompletedBatchOperation;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleProvider;
import org.onosproject.net.flow.oldbatch.FlowRuleBatchEntry;
import org.onosproject.net.flow.oldbatch.FlowRuleBatchOperation;
import org.onosproject.net.provider.ProviderId;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The flow rule providers registered with the flow subsystem (ONOS 2.7 FlowRuleManager's provider registry) and
 * their batches in flight: a device's rules go to the provider that reported the device (its ProviderId, as
 * FlowRuleManager's {@code getProvider(device.providerId())}); {@link #execute} hands the provider one
 * FlowRuleBatchOperation and waits for the provider service's {@code batchOperationCompleted}, as
 * FlowRuleManager's FlowOperationsProcessor does (asynchronously there; here on the device's own thread, {@link
 * DeviceLanes}). A provider that does not answer in time fails the whole batch.
 */
final class FlowProviders {
    /** How long a provider has to complete a batch (OpenFlow: flow mods plus the barrier's round trip). */
    static final long BATCH_DEADLINE_MS = 15_000;
    private final Map<ProviderId, FlowRuleProvider> providers = new ConcurrentHashMap<>();
    private final Map<Long, CompletableFuture<CompletedBatchOperation>> pending = new ConcurrentHashMap<>();
    private final AtomicLong batchIds = new AtomicLong();

    void add(FlowRuleProvider provider) {
        if (providers.putIfAbsent(provider.id(), provider) != null) {
            throw new IllegalStateException("flow rule provider " + provider.id() + " already registered");
        }
    }

    void remove(FlowRuleProvider provider) {
        providers.remove(provider.id(), provider);
    }

    Set<ProviderId> ids() {
        return ImmutableSet.copyOf(providers.keySet());
    }

    /** The provider of a device's rules, or null (no such provider: the flow subsystem's default path). */
    FlowRuleProvider of(ProviderId deviceProvider) {
        return deviceProvider == null ? null : providers.get(deviceProvider);
    }

    /** Runs one batch for one device and waits for its completion; the rules that failed (all, on a timeout). */
    Set<FlowRule> execute(FlowRuleProvider provider, DeviceId device, List<FlowRuleBatchEntry> ops) {
        long id = batchIds.incrementAndGet();
        CompletableFuture<CompletedBatchOperation> done = new CompletableFuture<>();
        pending.put(id, done);
        try {
            provider.executeBatch(new FlowRuleBatchOperation(ops, device, id));
            CompletedBatchOperation result = done.get(BATCH_DEADLINE_MS, TimeUnit.MILLISECONDS);
            return result.isSuccess() ? Set.of() : result.failedItems();
        } catch (TimeoutException | ExecutionException | RuntimeException e) {
            return ops.stream().map(FlowRuleBatchEntry::target).collect(ImmutableSet.toImmutableSet());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ops.stream().map(FlowRuleBatchEntry::target).collect(ImmutableSet.toImmutableSet());
        } finally {
            pending.remove(id);
        }
    }

    /** The provider service's batchOperationCompleted. */
    void completed(long batchId, CompletedBatchOperation result) {
        CompletableFuture<CompletedBatchOperation> f = pending.get(batchId);
        if (f != null) {
            f.complete(result);
        }
    }
}
