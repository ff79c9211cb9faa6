package org.metron.app.onos;

import org.metron.app.spi.FailoverGroup;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.DefaultGroupDescription;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBuckets;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupEvent;
import org.onosproject.net.group.GroupKey;
import org.onosproject.net.group.GroupListener;
import org.onosproject.net.group.GroupService;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Fast-failover groups through ONOS's GroupService. A group is asked for with its id given ({@code givenGroupId}:
 * the rules that send to it name that id) under a key of its own, and is in the device once GroupService says
 * GROUP_ADDED (ONOS confirms a group from the device's group statistics, not when it sends the group mod): the
 * future completes then, so rules sending to it are installed only once it exists. Deletion completes on
 * GROUP_REMOVED, or at once for a group GroupService does not know.
 */
final class FailoverGroups {
    private static final long DEADLINE_S = 30;
    private final GroupService groups;
    private final ApplicationId appId;

    FailoverGroups(GroupService groups, ApplicationId appId) {
        this.groups = groups;
        this.appId = appId;
    }

    /** The group's key: its id, which Metron never reuses while a rule may send to it. */
    static GroupKey key(int groupId) {
        return new DefaultGroupKey(("metron-ff-" + groupId).getBytes(StandardCharsets.UTF_8));
    }

    static GroupDescription description(FailoverGroup g, ApplicationId appId) {
        GroupBuckets buckets = new GroupBuckets(g.buckets().stream()
                .map(b -> DefaultGroupBucket.createFailoverGroupBucket(b.treatment(), b.watchPort(), null))
                .collect(Collectors.toList()));
        return new DefaultGroupDescription(g.device(), GroupDescription.Type.FAILOVER, buckets, key(g.id()), g.id(),
                appId);
    }

    CompletableFuture<Void> add(DeviceId device, List<FailoverGroup> add) {
        if (add.isEmpty()) {
            return CompletableFuture.completedFuture(null); // no GROUP_ADDED will come to complete it
        }
        Set<GroupKey> waiting = add.stream().map(g -> key(g.id())).collect(Collectors.toCollection(HashSet::new));
        CompletableFuture<Void> done = new CompletableFuture<>();
        GroupListener l = e -> {
            if (!e.subject().deviceId().equals(device) || !waiting.contains(e.subject().appCookie())) {
                return;
            }
            if (e.type() == GroupEvent.Type.GROUP_ADD_FAILED) {
                done.completeExceptionally(new IllegalStateException(device + " failed to add group "
                        + e.subject().id() + " (" + e.subject().failedRetryCount() + " retries)"));
            } else if (e.type() == GroupEvent.Type.GROUP_ADDED) {
                settle(waiting, e.subject().appCookie(), done);
            }
        };
        return watch(l, done, () -> add.forEach(g -> groups.addGroup(description(g, appId))), () -> {
            // confirmed before the listener was in place
            for (FailoverGroup g : add) {
                Group now = groups.getGroup(device, key(g.id()));
                if (now != null && now.state() == Group.GroupState.ADDED) {
                    settle(waiting, key(g.id()), done);
                }
            }
        });
    }

    /**
     * Metron's FAILOVER groups of a device as GroupService has them (its store: ONOS keeps a device's groups there
     * and audits the device against it), but those being deleted. Filtered by application here too: whether
     * {@code getGroups(device, appId)} filters by application has differed between ONOS versions.
     */
    List<FailoverGroup> read(DeviceId device) {
        List<FailoverGroup> out = new ArrayList<>();
        for (Group g : groups.getGroups(device, appId)) {
            if (g == null || !appId.equals(g.appId()) || g.type() != GroupDescription.Type.FAILOVER
                    || g.state() == Group.GroupState.PENDING_DELETE || g.buckets().buckets().size() < 2
                    || g.buckets().buckets().stream().anyMatch(b -> b.watchPort() == null)) {
                continue;
            }
            out.add(new FailoverGroup(device, g.id().id(), g.buckets().buckets().stream()
                    .map(b -> new FailoverGroup.Bucket(b.watchPort(), b.treatment())).collect(Collectors.toList())));
        }
        return out;
    }

    CompletableFuture<Void> remove(DeviceId device, Collection<FailoverGroup> gone) {
        Set<GroupKey> waiting = gone.stream().map(g -> key(g.id())).filter(k -> groups.getGroup(device, k) != null)
                .collect(Collectors.toCollection(HashSet::new));
        if (waiting.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        GroupListener l = e -> {
            if (e.subject().deviceId().equals(device) && waiting.contains(e.subject().appCookie())) {
                if (e.type() == GroupEvent.Type.GROUP_REMOVE_FAILED) {
                    done.completeExceptionally(new IllegalStateException(device + " failed to delete group "
                            + e.subject().id()));
                } else if (e.type() == GroupEvent.Type.GROUP_REMOVED) {
                    settle(waiting, e.subject().appCookie(), done);
                }
            }
        };
        Set<GroupKey> keys = Set.copyOf(waiting);
        return watch(l, done, () -> keys.forEach(k -> groups.removeGroup(device, k, appId)), () -> keys.stream()
                .filter(k -> groups.getGroup(device, k) == null).forEach(k -> settle(waiting, k, done)));
    }

    private static void settle(Set<GroupKey> waiting, GroupKey k, CompletableFuture<Void> done) {
        synchronized (waiting) {
            if (waiting.remove(k) && waiting.isEmpty()) {
                done.complete(null);
            }
        }
    }

    /**
     * Listens while {@code request} runs and until {@code done} completes, at most {@value #DEADLINE_S} s: a device
     * that never confirms (no master, gone) must not keep a listener.
     */
    private CompletableFuture<Void> watch(GroupListener l, CompletableFuture<Void> done, Runnable request,
                                         Runnable alreadyDone) {
        groups.addListener(l);
        done.orTimeout(DEADLINE_S, TimeUnit.SECONDS).whenComplete((v, t) -> groups.removeListener(l));
        try {
            request.run();
            alreadyDone.run();
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }
}
