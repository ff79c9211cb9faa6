package org.metron.drivers.provider;

import org.metron.drivers.server.AgentClientService;
import org.metron.drivers.server.MetronDeviceIds;
import org.onlab.util.ItemNotFoundException;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.PortNumber;
import org.onosproject.net.config.ConfigFactory;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigRegistry;
import org.onosproject.net.device.DeviceHandshaker;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.device.DeviceProviderRegistry;
import org.onosproject.net.device.DeviceProviderService;
import org.onosproject.net.driver.DefaultDriverData;
import org.onosproject.net.driver.DefaultDriverHandler;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.link.LinkProvider;
import org.onosproject.net.link.LinkProviderRegistry;
import org.onosproject.net.provider.AbstractProvider;
import org.onosproject.net.provider.ProviderId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.onlab.util.Tools.groupedThreads;
import static org.onosproject.net.config.basics.SubjectFactories.DEVICE_SUBJECT_FACTORY;
import static org.slf4j.LoggerFactory.getLogger;

/**
 * ONOS device provider for Metron servers: each {@code devices/metron:<host>:<port>/metron} netcfg entry becomes a
 * SERVER device driven by the {@code metron-server} driver, available while its agent answers (probed every
 * {@value #DEFAULT_PROBE_MS} ms, or {@code -Dmetron.serverProbeMs}), with its NICs as ports and links to the
 * switch ports netcfg names. No ONOS provider handles a scheme of its own (ONOS's general device provider takes
 * only {@code device:} ids), so without this one a netcfg'd server never becomes a device.
 */
@Component(immediate = true)
public class MetronServerProvider extends AbstractProvider implements DeviceProvider {

    public static final ProviderId PROVIDER_ID = new ProviderId(MetronDeviceIds.SCHEME, "org.metron.drivers.provider");
    public static final String DRIVER = "metron-server";
    static final long DEFAULT_PROBE_MS = 1000;

    private final Logger log = getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceProviderRegistry deviceProviderRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkProviderRegistry linkProviderRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigRegistry netcfg;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DriverService driverService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AgentClientService agents;

    private final ConfigFactory<DeviceId, MetronServerConfig> configFactory =
            new ConfigFactory<>(DEVICE_SUBJECT_FACTORY, MetronServerConfig.class, MetronServerConfig.KEY) {
                @Override
                public MetronServerConfig createConfig() {
                    return new MetronServerConfig();
                }
            };
    private final LinkProvider linkProvider = new ServerLinkProvider();
    private final NetworkConfigListener configListener = new ServerConfigListener();
    private DeviceProviderService deviceProviderService;
    private ScheduledExecutorService executor;
    private ServerDevices servers;

    public MetronServerProvider() {
        super(PROVIDER_ID);
    }

    @Activate
    protected void activate() {
        netcfg.registerConfigFactory(configFactory);
        deviceProviderService = deviceProviderRegistry.register(this);
        servers = new ServerDevices(deviceProviderService, linkProviderRegistry.register(linkProvider), agents,
                                    this::handler, DRIVER);
        executor = Executors.newSingleThreadScheduledExecutor(groupedThreads("metron", "server-provider", log));
        netcfg.addListener(configListener);
        executor.execute(() -> netcfg.getSubjects(DeviceId.class, MetronServerConfig.class).forEach(this::apply));
        long probeMs = Long.getLong("metron.serverProbeMs", DEFAULT_PROBE_MS);
        executor.scheduleWithFixedDelay(servers::probeAll, probeMs, probeMs, TimeUnit.MILLISECONDS);
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() throws InterruptedException {
        netcfg.removeListener(configListener);
        executor.shutdownNow();
        executor.awaitTermination(10, TimeUnit.SECONDS);
        servers.declared().forEach(servers::forget);
        linkProviderRegistry.unregister(linkProvider);
        deviceProviderRegistry.unregister(this);
        netcfg.unregisterConfigFactory(configFactory);
        log.info("Stopped");
    }

    /** Declares, re-declares or forgets a server from its netcfg entry; a bad entry is logged naming the fault. */
    private void apply(DeviceId id) {
        MetronServerConfig cfg = netcfg.getConfig(id, MetronServerConfig.class);
        if (cfg == null) {
            servers.forget(id);
            return;
        }
        try {
            cfg.check();
            servers.declare(id, cfg.endpoint(), cfg.nics());
        } catch (IllegalArgumentException e) {
            log.error("Metron server netcfg refused: {}", e.getMessage());
        }
    }

    /**
     * The server's driver handler: the driver ONOS binds to the device (netcfg {@code basic.driver}, the device's
     * driver annotation), else {@value #DRIVER}, which a device not yet known to ONOS has none of.
     */
    private DriverHandler handler(DeviceId id) {
        try {
            DriverHandler h = driverService.createHandler(id);
            if (h.driver().hasBehaviour(DeviceHandshaker.class)) {
                return h;
            }
        } catch (ItemNotFoundException e) {
            // not bound yet
        }
        return new DefaultDriverHandler(new DefaultDriverData(driverService.getDriver(DRIVER), id));
    }

    @Override
    public void triggerProbe(DeviceId deviceId) {
        executor.execute(() -> servers.probe(deviceId));
    }

    @Override
    public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
        // agents have no arbitration of their own: the role asked for is the role this instance has
        handler(deviceId).behaviour(DeviceHandshaker.class).roleChanged(newRole);
        deviceProviderService.receivedRoleReply(deviceId, newRole, newRole);
    }

    @Override
    public boolean isReachable(DeviceId deviceId) {
        return servers.isConnected(deviceId);
    }

    @Override
    public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
        log.warn("{}: a Metron server's NIC ports cannot be enabled or disabled from ONOS (port {})",
                 deviceId, portNumber);
    }

    private final class ServerLinkProvider extends AbstractProvider implements LinkProvider {
        ServerLinkProvider() {
            super(PROVIDER_ID);
        }
    }

    private final class ServerConfigListener implements NetworkConfigListener {
        @Override
        public boolean isRelevant(NetworkConfigEvent e) {
            return e.configClass() == MetronServerConfig.class && e.subject() instanceof DeviceId;
        }

        @Override
        public void event(NetworkConfigEvent e) {
            executor.execute(() -> apply((DeviceId) e.subject()));
        }
    }
}
