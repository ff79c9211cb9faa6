package org.metron.standin.net;

import org.onosproject.core.ApplicationId;
import org.onosproject.core.GroupId;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.group.DefaultGroup;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBuckets;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupEvent;
import org.onosproject.net.group.GroupKey;
import org.onosproject.net.group.GroupListener;
import org.onosproject.net.group.GroupService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Groups (core-net's GroupManager + DistributedGroupStore, stand-in), as far as Metron uses them (add, look up,
 * remove; fast-failover groups with given ids). As ONOS 2.7 does: a group is stored PENDING_ADD under its key (a
 * second add with a key the device already has is ignored), with its given id or a free one; it becomes ADDED, with
 * a GROUP_ADDED event, once the device confirms it; a removal makes it PENDING_DELETE and it leaves the store, with
 * GROUP_REMOVED, once the device no longer has it; a device with no master takes no request (ONOS logs it and sends
 * no event). A failover bucket without a watch port or group is refused where ONOS refuses it
 * (DefaultGroupBucket).
 * <p>
 * No group provider (ONOS's OpenFlowGroupProvider) is stood in for: the device's confirmation is this stand-in's
 * own, on its worker thread, as FlowRuleStandin records the rules of switches with no switch behind them. A real
 * switch behind the OpenFlow stand-in therefore never gets the group, and refuses a rule sending to it (OVS:
 * OFPBAC_BAD_OUT_GROUP). Bucket updates and purges, which Metron does not use, are refused. Each node keeps its
 * own groups (ONOS forwards a request to the device's master).
 */
@Component(immediate = true, service = GroupService.class)
public class GroupStandin extends AbstractListenerManager<GroupEvent, GroupListener> implements GroupService {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final Map<DeviceId, Map<GroupKey, DefaultGroup>> groups = new ConcurrentHashMap<>();
    private final ExecutorService device = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-groups"));

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastership;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(GroupEvent.class, listenerRegistry);
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() {
        dispatcher.removeSink(GroupEvent.class);
        device.shutdownNow();
        log.info("Stopped");
    }

    @Override
    public void addGroup(GroupDescription desc) {
        if (mastership.getMasterFor(desc.deviceId()) == null) {
            log.error("No Master for device {}...Can not perform add group operation", desc.deviceId());
            return;
        }
        Map<GroupKey, DefaultGroup> table = groups.computeIfAbsent(desc.deviceId(), k -> new ConcurrentHashMap<>());
        int id = desc.givenGroupId() != null ? desc.givenGroupId() : freeId(table);
        DefaultGroup g = new DefaultGroup(GroupId.valueOf(id), desc);
        synchronized (table) {
            if (table.containsKey(desc.appCookie())) {
                log.warn("Group already exists with the same key {}", desc.appCookie());
                return;
            }
            g.setState(Group.GroupState.PENDING_ADD);
            table.put(desc.appCookie(), g);
        }
        // GROUP_ADD_REQUESTED goes to the provider; the device's confirmation makes it ADDED
        device.execute(() -> {
            synchronized (table) {
                if (table.get(desc.appCookie()) != g || g.state() != Group.GroupState.PENDING_ADD) {
                    return;
                }
                g.setState(Group.GroupState.ADDED);
            }
            post(new GroupEvent(GroupEvent.Type.GROUP_ADDED, g));
        });
    }

    private static int freeId(Map<GroupKey, DefaultGroup> table) {
        int id = 1;
        for (DefaultGroup g : table.values()) {
            id = Math.max(id, g.id().id() + 1);
        }
        return id;
    }

    @Override
    public Group getGroup(DeviceId deviceId, GroupKey appCookie) {
        return groups.getOrDefault(deviceId, Map.of()).get(appCookie);
    }

    @Override
    public void removeGroup(DeviceId deviceId, GroupKey appCookie, ApplicationId appId) {
        if (mastership.getMasterFor(deviceId) == null) {
            log.error("No Master for device {}...Can not perform delete group operation", deviceId);
            return;
        }
        Map<GroupKey, DefaultGroup> table = groups.getOrDefault(deviceId, Map.of());
        DefaultGroup g;
        synchronized (table) {
            g = table.get(appCookie);
            if (g == null) {
                return;
            }
            g.setState(Group.GroupState.PENDING_DELETE);
        }
        device.execute(() -> {
            synchronized (table) {
                if (!table.remove(appCookie, g)) {
                    return;
                }
            }
            post(new GroupEvent(GroupEvent.Type.GROUP_REMOVED, g));
        });
    }

    @Override
    public Iterable<Group> getGroups(DeviceId deviceId, ApplicationId appId) {
        List<Group> out = new ArrayList<>();
        groups.getOrDefault(deviceId, Map.of()).values().stream().filter(g -> appId.equals(g.appId()))
                .forEach(out::add);
        return out;
    }

    @Override
    public Iterable<Group> getGroups(DeviceId deviceId) {
        return new ArrayList<>(groups.getOrDefault(deviceId, Map.of()).values());
    }

    @Override
    public void addBucketsToGroup(DeviceId deviceId, GroupKey oldCookie, GroupBuckets buckets, GroupKey newCookie,
                                  ApplicationId appId) {
        throw new UnsupportedOperationException("bucket updates are not stood in for (Metron does not use them)");
    }

    @Override
    public void removeBucketsFromGroup(DeviceId deviceId, GroupKey oldCookie, GroupBuckets buckets,
                                       GroupKey newCookie, ApplicationId appId) {
        throw new UnsupportedOperationException("bucket updates are not stood in for (Metron does not use them)");
    }

    @Override
    public void purgeGroupEntries(DeviceId deviceId) {
        throw new UnsupportedOperationException("purges are not stood in for (Metron does not use them)");
    }
}
