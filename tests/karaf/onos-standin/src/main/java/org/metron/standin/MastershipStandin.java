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
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * MastershipService (core-net's MastershipManager + core-dist's ConsistentDeviceMastershipStore, stand-in). One node:
 * this node masters every device. In a cluster ({@link AtomixNode} started): one election per device (topic
 * "device:&lt;id&gt;" on the Atomix LeaderElector "onos-mastership", as ONOS's store keeps it): requestRoleFor runs
 * for it (MASTER if elected, STANDBY otherwise), the leader is the master, the other candidates its backups; when
 * the master dies Atomix expires its session and the next candidate becomes master; MASTER_CHANGED/BACKUPS_CHANGED
 * events on every node.
 */
@Component(immediate = true, service = MastershipService.class)
public class MastershipStandin extends AbstractListenerManager<MastershipEvent, MastershipListener>
        implements MastershipService {
    private static final String PREFIX = "device:";

    // dynamic: the device service itself references mastership
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected volatile DeviceService deviceService;

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
            elections = new AtomixElections(atomixNode, "onos-mastership", this::changed);
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
        post(new MastershipEvent(Objects.equals(oldMaster, newMaster) ? MastershipEvent.Type.BACKUPS_CHANGED
                                         : MastershipEvent.Type.MASTER_CHANGED, id, info(now)));
    }

    private static MastershipInfo info(Leadership l) {
        if (l == null) {
            return new MastershipInfo();
        }
        ImmutableMap.Builder<NodeId, MastershipRole> roles = ImmutableMap.builder();
        NodeId master = l.leaderNodeId();
        if (master != null) {
            roles.put(master, MastershipRole.MASTER);
        }
        l.candidates().stream().filter(n -> !n.equals(master)).forEach(n -> roles.put(n, MastershipRole.STANDBY));
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
        return elections == null ? MastershipRole.MASTER : role(leadership(deviceId));
    }

    @Override
    public CompletableFuture<MastershipRole> requestRoleFor(DeviceId deviceId) {
        if (elections == null) {
            return CompletableFuture.completedFuture(MastershipRole.MASTER);
        }
        return CompletableFuture.supplyAsync(() -> role(elections.run(PREFIX + deviceId, ClusterStandin.LOCAL)));
    }

    @Override
    public CompletableFuture<Void> relinquishMastership(DeviceId deviceId) {
        if (elections == null) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> elections.withdraw(PREFIX + deviceId, ClusterStandin.LOCAL));
    }

    @Override
    public NodeId getMasterFor(DeviceId deviceId) {
        if (elections == null) {
            return ClusterStandin.LOCAL;
        }
        Leadership l = leadership(deviceId);
        return l == null ? null : l.leaderNodeId();
    }

    @Override
    public RoleInfo getNodesFor(DeviceId deviceId) {
        if (elections == null) {
            return new RoleInfo(ClusterStandin.LOCAL, ImmutableList.of());
        }
        MastershipInfo i = info(leadership(deviceId));
        return new RoleInfo(i.master().orElse(null), i.backups());
    }

    @Override
    public MastershipInfo getMastershipFor(DeviceId deviceId) {
        if (elections == null) {
            return new MastershipInfo(1, Optional.of(ClusterStandin.LOCAL),
                                      ImmutableMap.of(ClusterStandin.LOCAL, MastershipRole.MASTER));
        }
        return info(leadership(deviceId));
    }

    @Override
    public Set<DeviceId> getDevicesOf(NodeId nodeId) {
        if (elections != null) {
            return elections.all().entrySet().stream()
                    .filter(e -> e.getKey().startsWith(PREFIX) && nodeId.equals(e.getValue().leaderNodeId()))
                    .map(e -> DeviceId.deviceId(e.getKey().substring(PREFIX.length())))
                    .collect(ImmutableSet.toImmutableSet());
        }
        DeviceService devices = deviceService;
        if (devices == null || !ClusterStandin.LOCAL.equals(nodeId)) {
            return ImmutableSet.of();
        }
        ImmutableSet.Builder<DeviceId> ids = ImmutableSet.builder();
        for (Device d : devices.getDevices()) {
            ids.add(d.id());
        }
        return ids.build();
    }
}
