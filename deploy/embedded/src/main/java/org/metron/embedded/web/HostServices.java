package org.metron.embedded.web;

import com.google.common.collect.ImmutableMap;
import org.onlab.osgi.ServiceDirectory;
import org.onlab.osgi.ServiceNotFoundException;

import java.util.Map;

/** The services the embedded host offers its REST resources (what OSGi would inject inside ONOS). */
public final class HostServices implements ServiceDirectory {
    private final Map<Class<?>, Object> services;

    private HostServices(Map<Class<?>, Object> services) {
        this.services = services;
    }

    public static <T> HostServices of(Class<T> type, T impl) {
        return new HostServices(ImmutableMap.of(type, impl));
    }

    /** These services plus one more. */
    public <T> HostServices with(Class<T> type, T impl) {
        return new HostServices(ImmutableMap.<Class<?>, Object>builder().putAll(services).put(type, impl).build());
    }

    @Override
    public <T> T get(Class<T> serviceClass) {
        Object s = services.get(serviceClass);
        if (s == null) {
            throw new ServiceNotFoundException("service " + serviceClass.getName() + " is not offered by the "
                    + "embedded host");
        }
        return serviceClass.cast(s);
    }
}
