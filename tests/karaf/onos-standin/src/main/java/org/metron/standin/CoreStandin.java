package org.metron.standin;

import com.google.common.collect.ImmutableSet;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.core.IdGenerator;
import org.onosproject.core.Version;
import org.onosproject.net.config.basics.SubjectFactories;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * CoreService (core-net's CoreManager stand-in): application ids handed out once per name, ids 1.. as ONOS does
 * (the core app is 1), id generators per topic, version 2.7.0.
 */
@Component(immediate = true, service = CoreService.class)
public class CoreStandin implements CoreService {
    private final Map<String, ApplicationId> byName = new ConcurrentHashMap<>();
    private final Map<Short, ApplicationId> byId = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> idBlocks = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);

    @Activate
    protected void activate() {
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
        return byId.get(id);
    }

    @Override
    public ApplicationId getAppId(String name) {
        return byName.get(name);
    }

    @Override
    public ApplicationId registerApplication(String name) {
        return byName.computeIfAbsent(name, n -> {
            ApplicationId id = new DefaultApplicationId(nextId.getAndIncrement(), n);
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
