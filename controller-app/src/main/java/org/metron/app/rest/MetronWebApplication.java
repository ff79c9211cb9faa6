package org.metron.app.rest;

import org.onlab.rest.AbstractWebApplication;

import java.util.Set;

/** The REST application ONOS mounts at /onos/metron. */
public class MetronWebApplication extends AbstractWebApplication {
    @Override
    public Set<Class<?>> getClasses() {
        return getClasses(ChainsWebResource.class, InventoryWebResource.class,
                ScalingWebResource.class, MetricsWebResource.class,
                MetronExceptionMapper.class, StorageExceptionMapper.class, PendingRequestMapper.class);
    }
}
