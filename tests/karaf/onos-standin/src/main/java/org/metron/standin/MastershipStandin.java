package org.metron.standin;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import org.metron.standin.cluster.AtomixElections;
import org.metron.standin.cluster.AtomixNode;
import org.onosproject.cluster.Leadership;
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
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * MastershipService (core-net's MastershipManager + core-dist's ConsistentDeviceMastershipStore, stand-in), with
 * real roles as ONOS 2.7.0 has them: a device nobody asked for, or whose mastership was relinquished by every
 * candidate, has no master (local role NONE, {@code getMasterFor} null).
 * <p>
 * One node: {@code requestRoleFor} makes this node MASTER, the only node there is to elect; relinquishing leaves
 * the device with no master. Terms count up per device as the store's do.
 * <p>
 * In a cluster ({@link AtomixNode} started): one election per device (topic "device:&lt;id&gt;" on the Atomix
 * LeaderElector "onos-mastership", as ONOS's store keeps it): requestRoleFor runs for it (MASTER if elected,
 * STANDBY otherwise), the leader is the master, the other candidates its backups; relinquishing withdraws (the
 * next candidate becomes master); when the master dies Atomix expires its session and the next candidate becomes
 * master. Each change posts MASTER_CHANGED (BACKUPS_CHANGED when only the backups changed) on every node.
 */
@Component(immediate = true, service = MastershipService.class)
public class MastershipStandin extends AbstractListenerManager<MastershipEvent, MastershipListener>
        implements MastershipService {
    private static final String PREFIX = "device:";
    private final Logger log = LoggerFactory.getLogger(getClass());
    /** One node: the devices this node masters, with their mastership term. */
    private final Map<DeviceId, Long> mastered = new ConcurrentHashMap<>();
    private final Map<DeviceId, Long> terms = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    private volatile AtomixElections elections;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(MastershipEvent.class, listenerRegistry);
        if (atomixNode.atomix() != null) {
            elections = new AtomixElections(atomixNode, "onos-mastership", ClusterStandin.LOCAL, this::changed);
        }
    }

    @Deactivate
    protected void deactivate() {
        if (elections != null) {
            elections.close();
        }
        dispatcher.removeSink(MastershipEvent.class);
    }

    private void changed(String topic, Leadership old, Leadership now) {
        if (!topic.startsWith(PREFIX)) {
            return;
        }
        DeviceId id = DeviceId.deviceId(topic.substring(PREFIX.length()));
        NodeId oldMaster = old == null ? null : old.leaderNodeId();
        NodeId newMaster = now == null ? null : now.leaderNodeId();
        if (!Objects.equals(oldMaster, newMaster)) {
            log.info("master of {}: {} -> {}", id, oldMaster, newMaster);
        }
        post(new MastershipEvent(Objects.equals(oldMaster, newMaster) ? MastershipEvent.Type.BACKUPS_CHANGED
                                         : MastershipEvent.Type.MASTER_CHANGED, id, info(now)));
    }

    /** ONOS's MastershipInfo of a device's leadership (ConsistentDeviceMastershipStore's). */
    static MastershipInfo info(Leadership l) {
        if (l == null) {
            return new MastershipInfo();
        }
        ImmutableMap.Builder<NodeId, MastershipRole> roles = ImmutableMap.builder();
        NodeId master = l.leaderNodeId();
        if (master != null) {
            roles.put(master, MastershipRole.MASTER);
        }
        // distinct: Atomix's elector lists a candidate once per Raft session (DefaultLeaderElectorService's
        // registrations), so a node whose session was recovered is listed twice until the old session expires
        // (measured after a storage member's kill). ONOS's buildMastershipFromLeadership puts each into an
        // ImmutableMap and throws then, losing that MastershipEvent; the stand-in gives the roles instead.
        l.candidates().stream().filter(n -> !n.equals(master)).distinct()
                .forEach(n -> roles.put(n, MastershipRole.STANDBY));
        return new MastershipInfo(l.leader() == null ? 0 : l.leader().term(), Optional.ofNullable(master),
                                  roles.build());
    }

    private Leadership leadership(DeviceId deviceId) {
        return elections.get(PREFIX + deviceId);
    }

    private static MastershipRole role(Leadership l) {
        if (l == null) {
            return MastershipRole.NONE;
        }
        return ClusterStandin.LOCAL.equals(l.leaderNodeId()) ? MastershipRole.MASTER
                : l.candidates().contains(ClusterStandin.LOCAL) ? MastershipRole.STANDBY : MastershipRole.NONE;
    }

    @Override
    public MastershipRole getLocalRole(DeviceId deviceId) {
        if (elections != null) {
            return role(leadership(deviceId));
        }
        return mastered.containsKey(deviceId) ? MastershipRole.MASTER : MastershipRole.NONE;
    }

    /** One node: this node wins every election; the store's MASTER_CHANGED follows a change only. */
    @Override
    public CompletableFuture<MastershipRole> requestRoleFor(DeviceId deviceId) {
        if (elections != null) {
            return CompletableFuture.supplyAsync(() -> role(elections.run(PREFIX + deviceId, ClusterStandin.LOCAL)));
        }
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

    /** One node: this node gives the role up and, being alone, leaves the device with no master (role NONE). */
    @Override
    public CompletableFuture<Void> relinquishMastership(DeviceId deviceId) {
        if (elections != null) {
            return CompletableFuture.runAsync(() -> elections.withdraw(PREFIX + deviceId, ClusterStandin.LOCAL));
        }
        if (mastered.remove(deviceId) != null) {
            log.info("{} relinquished mastership of {}: no master", ClusterStandin.LOCAL, deviceId);
            post(new MastershipEvent(MastershipEvent.Type.MASTER_CHANGED, deviceId, getMastershipFor(deviceId)));
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public NodeId getMasterFor(DeviceId deviceId) {
        if (elections != null) {
            Leadership l = leadership(deviceId);
            return l == null ? null : l.leaderNodeId();
        }
        return mastered.containsKey(deviceId) ? ClusterStandin.LOCAL : null;
    }

    @Override
    public RoleInfo getNodesFor(DeviceId deviceId) {
        if (elections != null) {
            MastershipInfo i = info(leadership(deviceId));
            return new RoleInfo(i.master().orElse(null), i.backups());
        }
        return new RoleInfo(getMasterFor(deviceId), ImmutableList.of());
    }

    @Override
    public MastershipInfo getMastershipFor(DeviceId deviceId) {
        if (elections != null) {
            return info(leadership(deviceId));
        }
        NodeId master = getMasterFor(deviceId);
        return new MastershipInfo(terms.getOrDefault(deviceId, 0L), Optional.ofNullable(master),
                                  master == null ? ImmutableMap.of()
                                          : ImmutableMap.of(master, MastershipRole.MASTER));
    }

    @Override
    public Set<DeviceId> getDevicesOf(NodeId nodeId) {
        if (elections != null) {
            return elections.all().entrySet().stream()
                    .filter(e -> e.getKey().startsWith(PREFIX) && nodeId.equals(e.getValue().leaderNodeId()))
                    .map(e -> DeviceId.deviceId(e.getKey().substring(PREFIX.length())))
                    .collect(ImmutableSet.toImmutableSet());
        }
        return ClusterStandin.LOCAL.equals(nodeId) ? ImmutableSet.copyOf(mastered.keySet()) : ImmutableSet.of();
    }
}
