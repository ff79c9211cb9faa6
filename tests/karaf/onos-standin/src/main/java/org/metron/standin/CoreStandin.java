package org.metron.standin;

import com.google.common.collect.ImmutableSet;
import io.atomix.core.counter.AtomicCounter;
import io.atomix.core.map.AtomicMap;
import org.metron.standin.cluster.AtomixNode;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.core.IdGenerator;
import org.onosproject.core.Version;
import org.onosproject.net.config.basics.SubjectFactories;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * CoreService (core-net's CoreManager stand-in): application ids handed out once per name, ids 1.. as ONOS does
 * (the core app is 1), id generators per topic, version 2.7.0. In a cluster ({@link AtomixNode} started) the
 * application ids are cluster-wide, as ONOS's DistributedApplicationIdStore keeps them: one Atomix map of names to
 * ids, new ids from an Atomix counter, so an app (and the appId of its flow rules) has one id on every node.
 */
@Component(immediate = true, service = CoreService.class)
public class CoreStandin implements CoreService {
    private final Map<String, ApplicationId> byName = new ConcurrentHashMap<>();
    private final Map<Short, ApplicationId> byId = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> idBlocks = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    private AtomicMap<String, byte[]> sharedIds;
    private AtomicCounter idCounter;

    @Activate
    protected void activate() {
        if (atomixNode.atomix() != null) {
            sharedIds = atomixNode.bytesMap("onos-app-ids");
            idCounter = atomixNode.counter("onos-app-id-counter");
        }
        registerApplication(CORE_APP_NAME);
        // as core-net's BasicNetworkConfigs does: the "apps" netcfg subject factory resolves names through us
        SubjectFactories.setCoreService(this);
    }

    @Override
    public Version version() {
        return ClusterStandin.VERSION;
    }

    @Override
    public Set<ApplicationId> getAppIds() {
        return ImmutableSet.copyOf(byName.values());
    }

    @Override
    public ApplicationId getAppId(Short id) {
        ApplicationId known = byId.get(id);
        if (known == null && sharedIds != null && id != null) {
            // registered on another node only: learn it here
            for (Map.Entry<String, io.atomix.utils.time.Versioned<byte[]>> e : sharedIds.entrySet()) {
                if (ByteBuffer.wrap(e.getValue().value()).getShort() == id) {
                    return registerApplication(e.getKey());
                }
            }
        }
        return known;
    }

    /** The cluster-wide id of name: the recorded one, else the counter's next, recorded unless another node won. */
    private short sharedId(String name) {
        io.atomix.utils.time.Versioned<byte[]> v = sharedIds.get(name);
        if (v == null) {
            short next = (short) idCounter.incrementAndGet();
            v = sharedIds.putIfAbsent(name, ByteBuffer.allocate(2).putShort(next).array());
            if (v == null) {
                return next;
            }
        }
        return ByteBuffer.wrap(v.value()).getShort();
    }

    @Override
    public ApplicationId getAppId(String name) {
        return byName.get(name);
    }

    @Override
    public ApplicationId registerApplication(String name) {
        return byName.computeIfAbsent(name, n -> {
            ApplicationId id = new DefaultApplicationId(sharedIds == null ? nextId.getAndIncrement() : sharedId(n), n);
            byId.put(id.id(), id);
            return id;
        });
    }

    @Override
    public ApplicationId registerApplication(String name, Runnable preDeactivate) {
        return registerApplication(name);
    }

    @Override
    public IdGenerator getIdGenerator(String topic) {
        AtomicLong next = idBlocks.computeIfAbsent(topic, t -> new AtomicLong(1));
        return next::getAndIncrement;
    }
}
