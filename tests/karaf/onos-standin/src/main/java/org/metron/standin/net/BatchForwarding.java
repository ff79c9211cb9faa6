package org.metron.standin.net;

import io.atomix.cluster.MemberId;
import io.atomix.core.Atomix;
import org.onosproject.cluster.NodeId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.store.serializers.KryoNamespaces;
import org.onosproject.store.service.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * In a cluster, a batch for a device another node masters goes to that node, as ONOS 2.7's ECFlowRuleStore
 * forwards {@code storeBatch} to the device's master over ClusterCommunicationService: only the master's
 * connection to an OpenFlow switch holds the MASTER role, the switch refuses flow mods from the others. The master
 * runs it through its own provider (on threads of its own, so two nodes forwarding to each other cannot wait on
 * each other; one per device, {@link DeviceLanes}) and answers whether every rule was applied. Carried over
 * Atomix's cluster messaging, rules Kryo-encoded with ONOS's API namespace.
 */
final class BatchForwarding {
    private static final String SUBJECT = "standin-flow-batch";
    private static final Serializer SERIALIZER = Serializer.using(KryoNamespaces.API);
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final Atomix atomix;

    /** What a master does with a forwarded batch: apply it, true if every rule was. */
    interface Local {
        boolean apply(DeviceId device, List<FlowRule> rules, boolean add);
    }

    /** {@code lanes}: where each device's forwarded batches run, in the order they arrive ({@link DeviceLanes}). */
    BatchForwarding(Atomix atomix, Local local, DeviceLanes lanes) {
        this.atomix = atomix;
        java.util.function.Function<List<Object>, CompletableFuture<Boolean>> handler = batch -> {
            DeviceId device = DeviceId.deviceId((String) batch.get(0));
            @SuppressWarnings("unchecked")
            List<FlowRule> rules = (List<FlowRule>) batch.get(2);
            return CompletableFuture.supplyAsync(() -> local.apply(device, rules, (Boolean) batch.get(1)),
                                                 lanes.of(device));
        };
        atomix.getCommunicationService().subscribe(SUBJECT, SERIALIZER::decode, handler, SERIALIZER::encode).join();
    }

    /** Sends the batch to {@code master} and waits for its verdict; false if it cannot be had in time. */
    boolean toMaster(NodeId master, DeviceId device, List<FlowRule> rules, boolean add) {
        List<Object> batch = new ArrayList<>(List.of(device.toString(), add, new ArrayList<>(rules)));
        CompletableFuture<Boolean> verdict = atomix.getCommunicationService().send(SUBJECT, batch,
                SERIALIZER::encode, SERIALIZER::decode, MemberId.from(master.id()),
                Duration.ofMillis(FlowProviders.BATCH_DEADLINE_MS));
        try {
            return verdict.get(FlowProviders.BATCH_DEADLINE_MS + 1000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            log.warn("batch of {} rules for {} forwarded to its master {} failed: {}", rules.size(), device, master,
                     e.toString());
            return false;
        }
    }

    void close() {
        atomix.getCommunicationService().unsubscribe(SUBJECT);
    }
}
