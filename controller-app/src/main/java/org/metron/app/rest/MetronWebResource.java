package org.metron.app.rest;

import org.onlab.osgi.ServiceDirectory;
import org.onosproject.rest.AbstractWebResource;

import javax.ws.rs.core.Configuration;
import javax.ws.rs.core.Context;

/**
 * Base of Metron's resources. Inside ONOS services come from OSGi (the inherited lookup); a host that runs the
 * resources on its own Jersey (the embedded host, tests) passes a {@link ServiceDirectory} as the application
 * property {@link #SERVICES}, so no static state is involved.
 */
public abstract class MetronWebResource extends AbstractWebResource {
    /** Jersey property holding a {@link ServiceDirectory} for hosts outside OSGi. */
    public static final String SERVICES = "org.metron.app.services";

    @Context
    private Configuration config;

    @Override
    public <T> T get(Class<T> service) {
        Object dir = config == null ? null : config.getProperty(SERVICES);
        if (dir instanceof ServiceDirectory) {
            return ((ServiceDirectory) dir).get(service);
        }
        return super.get(service);
    }
}
