package org.metron.standin;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import org.onosproject.cluster.NodeId;
import org.onosproject.cluster.RoleInfo;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.mastership.MastershipEvent;
import org.onosproject.mastership.MastershipInfo;
import org.onosproject.mastership.MastershipListener;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceService;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** Mastership in a one-node cluster (core-net's MastershipManager stand-in): this node masters every device. */
@Component(immediate = true, service = MastershipService.class)
public class MastershipStandin extends AbstractListenerManager<MastershipEvent, MastershipListener>
        implements MastershipService {

    // dynamic: the device service itself references mastership
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected volatile DeviceService deviceService;

    @Override
    public MastershipRole getLocalRole(DeviceId deviceId) {
        return MastershipRole.MASTER;
    }

    @Override
    public CompletableFuture<MastershipRole> requestRoleFor(DeviceId deviceId) {
        return CompletableFuture.completedFuture(MastershipRole.MASTER);
    }

    @Override
    public CompletableFuture<Void> relinquishMastership(DeviceId deviceId) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public NodeId getMasterFor(DeviceId deviceId) {
        return ClusterStandin.LOCAL;
    }

    @Override
    public RoleInfo getNodesFor(DeviceId deviceId) {
        return new RoleInfo(ClusterStandin.LOCAL, ImmutableList.of());
    }

    @Override
    public MastershipInfo getMastershipFor(DeviceId deviceId) {
        return new MastershipInfo(1, Optional.of(ClusterStandin.LOCAL),
                                  ImmutableMap.of(ClusterStandin.LOCAL, MastershipRole.MASTER));
    }

    @Override
    public Set<DeviceId> getDevicesOf(NodeId nodeId) {
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
