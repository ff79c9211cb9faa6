package org.metron.app.local;

import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.core.IdGenerator;
import org.onosproject.core.Version;

import java.util.Set;

/**
 * ONOS's CoreService for a host that runs one application with a fixed id (the embedded host): what ONOS's
 * FlowRule codec asks to name a rule's application. It registers nothing else.
 */
public final class SingleAppCore implements CoreService {
    private static final Version VERSION = Version.version("2.7.0");
    private final ApplicationId app;

    public SingleAppCore(ApplicationId app) {
        this.app = app;
    }

    @Override
    public Version version() {
        return VERSION;
    }

    @Override
    public Set<ApplicationId> getAppIds() {
        return Set.of(app);
    }

    /** The application, or null for another id (ONOS's FlowRule codec then writes "<none>"). */
    @Override
    public ApplicationId getAppId(Short id) {
        return id != null && id == app.id() ? app : null;
    }

    @Override
    public ApplicationId getAppId(String name) {
        return app.name().equals(name) ? app : null;
    }

    @Override
    public ApplicationId registerApplication(String name) {
        if (!app.name().equals(name)) {
            throw new UnsupportedOperationException("this host runs only " + app.name() + ", not " + name);
        }
        return app;
    }

    @Override
    public ApplicationId registerApplication(String name, Runnable preDeactivate) {
        return registerApplication(name);
    }

    @Override
    public IdGenerator getIdGenerator(String topic) {
        throw new UnsupportedOperationException("no id generators on a single-application host");
    }
}
