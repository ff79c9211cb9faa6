package org.metron.standin.app;

import com.google.common.collect.ImmutableSet;
import org.apache.karaf.features.FeaturesService;
import io.atomix.core.map.AtomicMap;
import io.atomix.core.map.AtomicMapEventListener;
import org.metron.standin.cluster.AtomixNode;
import org.onosproject.app.ApplicationAdminService;
import org.onosproject.app.ApplicationDescription;
import org.onosproject.app.ApplicationEvent;
import org.onosproject.app.ApplicationListener;
import org.onosproject.app.ApplicationService;
import org.onosproject.app.ApplicationState;
import org.onosproject.common.app.ApplicationArchive;
import org.onosproject.core.Application;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.core.DefaultApplication;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.event.ListenerRegistry;
import org.onosproject.security.Permission;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The application subsystem (core-net's ApplicationManager + core-dist's DistributedApplicationStore, stand-in)
 * over onos-core-common's real ApplicationArchive, which saves an uploaded .oar, parses its app.xml and copies
 * its m2/ tree into Karaf's system repository, as ONOS does. As ONOS: an app whose required apps are not
 * installed is refused ("Missing dependencies for app X", HTTP 400 through ONOS's REST); activation activates
 * the required apps first, then adds the app's features repository and installs its features with Karaf's
 * FeaturesService; a feature that fails to install is only logged (WARN) and the app is still reported ACTIVE,
 * which is why the Karaf test judges Metron by its bundles and components, never by the app state.
 * In a cluster ({@link AtomixNode} started), as ONOS's DistributedApplicationStore: an install, activation,
 * deactivation or uninstall on any node is recorded in Atomix maps (the .oar's bytes, the app's state) and every
 * other node does the same locally, in the order recorded; a node that starts later catches up.
 */
@Component(immediate = true, service = {ApplicationAdminService.class, ApplicationService.class})
public class ApplicationManagerStandin extends ApplicationArchive implements ApplicationAdminService {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final ListenerRegistry<ApplicationEvent, ApplicationListener> listeners = new ListenerRegistry<>();
    private final Map<String, Application> apps = new ConcurrentHashMap<>();
    private final Map<String, ApplicationState> states = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected FeaturesService features;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    private AtomicMap<String, byte[]> sharedBits;
    private AtomicMap<String, byte[]> sharedStates;
    private ExecutorService follower;
    private final AtomicMapEventListener<String, byte[]> stateListener = e -> follower.execute(this::followAll);
    /** Raft log entries stay small (Atomix's default limit is 1 MB): an archive is kept in chunks of this size. */
    private static final int CHUNK = 512 * 1024;

    @Activate
    protected void activate() {
        dispatcher.addSink(ApplicationEvent.class, listeners);
        loadFromDisk();
        if (atomixNode.atomix() != null) {
            follower = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-apps"));
            sharedBits = atomixNode.bytesMap("onos-app-bits");
            sharedStates = atomixNode.bytesMap("onos-app-states");
            sharedStates.addListener(stateListener);
            follower.execute(this::followAll);
        }
    }

    /**
     * The apps this node's archive holds from before a restart, as ONOS's DistributedApplicationStore loads them
     * when it activates: each one installed (required apps first), and ACTIVE if its archive marks it active (its
     * features are in Karaf's own state already, which Karaf restores). Without it a restarted node ran the Metron
     * apps' bundles but listed no app, and following the cluster failed on the archive already saved here.
     */
    private void loadFromDisk() {
        Set<String> pending = new java.util.TreeSet<>(getApplicationNames());
        while (!pending.isEmpty()) {
            boolean progress = false;
            for (String name : Set.copyOf(pending)) {
                ApplicationDescription desc = getApplicationDescription(name);
                if (!apps.keySet().containsAll(desc.requiredApps())) {
                    continue;
                }
                Application app = DefaultApplication.builder(desc)
                        .withAppId(coreService.registerApplication(desc.name())).build();
                apps.put(name, app);
                states.put(name, isActive(name) ? ApplicationState.ACTIVE : ApplicationState.INSTALLED);
                log.info("app {} loaded from this node's archive: {}", name, states.get(name));
                pending.remove(name);
                progress = true;
            }
            if (!progress) {
                log.warn("apps in this node's archive whose required apps are missing: {}", pending);
                return;
            }
        }
    }

    @Deactivate
    protected void deactivate() {
        if (follower != null) {
            sharedStates.removeListener(stateListener);
            follower.shutdownNow();
        }
        dispatcher.removeSink(ApplicationEvent.class);
    }

    private void publish(String name, ApplicationState state) {
        if (sharedStates != null) {
            if (state == null) {
                sharedStates.remove(name);
                io.atomix.utils.time.Versioned<byte[]> n = sharedBits.remove(name);
                for (int i = 0; n != null && i < java.nio.ByteBuffer.wrap(n.value()).getInt(); i++) {
                    sharedBits.remove(name + "#" + i);
                }
            } else {
                sharedStates.put(name, state.name().getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private void putBits(String name, byte[] bytes) {
        int chunks = (bytes.length + CHUNK - 1) / CHUNK;
        for (int i = 0; i < chunks; i++) {
            sharedBits.put(name + "#" + i, java.util.Arrays.copyOfRange(bytes, i * CHUNK,
                                                                        Math.min(bytes.length, (i + 1) * CHUNK)));
        }
        sharedBits.put(name, java.nio.ByteBuffer.allocate(4).putInt(chunks).array());
    }

    private byte[] getBits(String name) {
        io.atomix.utils.time.Versioned<byte[]> n = sharedBits.get(name);
        if (n == null) {
            return null;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < java.nio.ByteBuffer.wrap(n.value()).getInt(); i++) {
            out.writeBytes(sharedBits.get(name + "#" + i).value());
        }
        return out.toByteArray();
    }

    /** Follows every app recorded in the cluster, again while that changes something (an app needs its required
     * apps installed here first, whatever order the events came in). */
    private void followAll() {
        for (int pass = 0; pass < 10; pass++) {
            boolean changed = false;
            for (String name : sharedStates.keySet()) {
                changed |= follow(name);
            }
            if (!changed) {
                return;
            }
        }
    }

    /** Brings this node's copy of app `name` to the state recorded in the cluster (another node's doing); true if
     * that changed anything here. */
    private synchronized boolean follow(String name) {
        try {
            io.atomix.utils.time.Versioned<byte[]> recorded = sharedStates.get(name);
            ApplicationState want = recorded == null ? null
                    : ApplicationState.valueOf(new String(recorded.value(), StandardCharsets.UTF_8));
            ApplicationState have = states.get(name);
            if (want == have) {
                return false;
            }
            log.info("app {}: {} here, {} in the cluster", name, have, want);
            if (want == null) {
                uninstallHere(app(getId(name)).id());
                return true;
            }
            if (have == null) {
                byte[] bits = getBits(name);
                if (bits == null) {
                    log.warn("app {} is {} in the cluster without its archive", name, want);
                    return false;
                }
                installHere(new ByteArrayInputStream(bits));
            }
            if (want == ApplicationState.ACTIVE) {
                activateHere(getId(name));
            } else if (states.get(name) == ApplicationState.ACTIVE) {
                deactivateHere(getId(name));
            }
            return true;
        } catch (RuntimeException e) {
            log.info("app {} does not follow the cluster yet: {}", name, e.toString());
            return false;
        }
    }

    private Application app(ApplicationId id) {
        Application app = id == null ? null : apps.get(id.name());
        if (app == null) {
            throw new IllegalArgumentException("Application " + id + " not installed");
        }
        return app;
    }

    @Override
    public synchronized Application install(InputStream archive) {
        if (sharedBits == null) {
            return installHere(archive);
        }
        byte[] bytes;
        try {
            bytes = archive.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Application app = installHere(new ByteArrayInputStream(bytes));
        putBits(app.id().name(), bytes);
        publish(app.id().name(), ApplicationState.INSTALLED);
        return app;
    }

    private synchronized Application installHere(InputStream archive) {
        ApplicationDescription desc = saveApplication(archive);
        for (String required : desc.requiredApps()) {
            if (!apps.containsKey(required)) {
                purgeApplication(desc.name());
                throw new IllegalArgumentException("Missing dependencies for app " + desc.name() + ": " + required);
            }
        }
        ApplicationId id = coreService.registerApplication(desc.name());
        Application app = DefaultApplication.builder(desc).withAppId(id).build();
        apps.put(desc.name(), app);
        states.put(desc.name(), ApplicationState.INSTALLED);
        dispatcher.post(new ApplicationEvent(ApplicationEvent.Type.APP_INSTALLED, app));
        return app;
    }

    @Override
    public synchronized void activate(ApplicationId id) {
        activateHere(id);
        for (String required : app(id).requiredApps()) {
            publish(required, ApplicationState.ACTIVE);
        }
        publish(id.name(), ApplicationState.ACTIVE);
    }

    private synchronized void activateHere(ApplicationId id) {
        Application app = app(id);
        if (states.get(id.name()) == ApplicationState.ACTIVE) {
            return;
        }
        for (String required : app.requiredApps()) {
            activateHere(getId(required));
        }
        app.featuresRepo().ifPresent(repo -> {
            try {
                features.addRepository(repo);
                for (String feature : app.features()) {
                    features.installFeature(feature);
                }
            } catch (Exception e) {
                // ONOS logs it and goes on: the app is ACTIVE whatever its bundles do
                log.warn("Unable to perform operation on application {}: {}", id.name(), e.toString(), e);
            }
        });
        setActive(id.name());
        states.put(id.name(), ApplicationState.ACTIVE);
        dispatcher.post(new ApplicationEvent(ApplicationEvent.Type.APP_ACTIVATED, app));
    }

    @Override
    public synchronized void deactivate(ApplicationId id) {
        deactivateHere(id);
        publish(id.name(), ApplicationState.INSTALLED);
    }

    private synchronized void deactivateHere(ApplicationId id) {
        Application app = app(id);
        for (String feature : app.features()) {
            try {
                features.uninstallFeature(feature);
            } catch (Exception e) {
                log.warn("Unable to uninstall feature {} of {}: {}", feature, id.name(), e.toString());
            }
        }
        clearActive(id.name());
        states.put(id.name(), ApplicationState.INSTALLED);
        dispatcher.post(new ApplicationEvent(ApplicationEvent.Type.APP_DEACTIVATED, app));
    }

    @Override
    public synchronized void uninstall(ApplicationId id) {
        uninstallHere(id);
        publish(id.name(), null);
    }

    private synchronized void uninstallHere(ApplicationId id) {
        Application app = app(id);
        if (states.get(id.name()) == ApplicationState.ACTIVE) {
            deactivateHere(id);
        }
        apps.remove(id.name());
        states.remove(id.name());
        purgeApplication(id.name());
        dispatcher.post(new ApplicationEvent(ApplicationEvent.Type.APP_UNINSTALLED, app));
    }

    @Override
    public void setPermissions(ApplicationId id, Set<Permission> permissions) {
        app(id);
    }

    @Override
    public Set<Application> getApplications() {
        return ImmutableSet.copyOf(apps.values());
    }

    @Override
    public ApplicationId getId(String name) {
        Application app = apps.get(name);
        return app == null ? null : app.id();
    }

    @Override
    public Application getApplication(ApplicationId id) {
        return id == null ? null : apps.get(id.name());
    }

    @Override
    public ApplicationState getState(ApplicationId id) {
        return id == null ? null : states.get(id.name());
    }

    @Override
    public Set<Permission> getPermissions(ApplicationId id) {
        return ImmutableSet.of();
    }

    @Override
    public void registerDeactivateHook(ApplicationId id, Runnable hook) {
    }

    @Override
    public void addListener(ApplicationListener listener) {
        listeners.addListener(listener);
    }

    @Override
    public void removeListener(ApplicationListener listener) {
        listeners.removeListener(listener);
    }
}
