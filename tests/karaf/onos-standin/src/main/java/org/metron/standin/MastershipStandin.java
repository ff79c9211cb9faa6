package org.metron.standin;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import org.onosproject.cluster.NodeId;
import org.onosproject.cluster.RoleInfo;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.mastership.MastershipEvent;
import org.onosproject.mastership.MastershipInfo;
import org.onosproject.mastership.MastershipListener;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mastership in a one-node cluster, with real roles (core-net's MastershipManager over core-dist's
 * ConsistentDeviceMastershipStore, stand-in): a device nobody asked for, or whose mastership was relinquished, has
 * no master (local role NONE, {@code getMasterFor} null); {@code requestRoleFor} makes this node its MASTER, the
 * only node there is to elect. Each change posts MASTER_CHANGED, which ONOS's DeviceManager (and the stand-in's)
 * reacts to. Terms count up per device as the store's do.
 */
@Component(immediate = true, service = MastershipService.class)
public class MastershipStandin extends AbstractListenerManager<MastershipEvent, MastershipListener>
        implements MastershipService {
    private final Logger log = LoggerFactory.getLogger(getClass());
    /** The devices this node masters, with their mastership term. */
    private final Map<DeviceId, Long> mastered = new ConcurrentHashMap<>();
    private final Map<DeviceId, Long> terms = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(MastershipEvent.class, listenerRegistry);
    }

    @Deactivate
    protected void deactivate() {
        dispatcher.removeSink(MastershipEvent.class);
    }

    @Override
    public MastershipRole getLocalRole(DeviceId deviceId) {
        return mastered.containsKey(deviceId) ? MastershipRole.MASTER : MastershipRole.NONE;
    }

    /** The only node of the cluster wins every election; the store's MASTER_CHANGED follows a change only. */
    @Override
    public CompletableFuture<MastershipRole> requestRoleFor(DeviceId deviceId) {
        boolean elected;
        synchronized (this) {
            elected = !mastered.containsKey(deviceId);
            if (elected) {
                mastered.put(deviceId, terms.merge(deviceId, 1L, Long::sum));
            }
        }
        if (elected) {
            log.info("{} is MASTER of {} (term {})", ClusterStandin.LOCAL, deviceId, mastered.get(deviceId));
            post(new MastershipEvent(MastershipEvent.Type.MASTER_CHANGED, deviceId, getMastershipFor(deviceId)));
        }
        return CompletableFuture.completedFuture(MastershipRole.MASTER);
    }

    /** This node gives the role up and, being alone, leaves the device with no master (role NONE). */
    @Override
    public CompletableFuture<Void> relinquishMastership(DeviceId deviceId) {
        if (mastered.remove(deviceId) != null) {
            log.info("{} relinquished mastership of {}: no master", ClusterStandin.LOCAL, deviceId);
            post(new MastershipEvent(MastershipEvent.Type.MASTER_CHANGED, deviceId, getMastershipFor(deviceId)));
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public NodeId getMasterFor(DeviceId deviceId) {
        return mastered.containsKey(deviceId) ? ClusterStandin.LOCAL : null;
    }

    @Override
    public RoleInfo getNodesFor(DeviceId deviceId) {
        return new RoleInfo(getMasterFor(deviceId), ImmutableList.of());
    }

    @Override
    public MastershipInfo getMastershipFor(DeviceId deviceId) {
        NodeId master = getMasterFor(deviceId);
        return new MastershipInfo(terms.getOrDefault(deviceId, 0L), Optional.ofNullable(master),
                                  master == null ? ImmutableMap.of()
                                          : ImmutableMap.of(master, MastershipRole.MASTER));
    }

    @Override
    public Set<DeviceId> getDevicesOf(NodeId nodeId) {
        return ClusterStandin.LOCAL.equals(nodeId) ? ImmutableSet.copyOf(mastered.keySet()) : ImmutableSet.of();
    }
}
