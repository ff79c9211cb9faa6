package org.metron.drivers.provider;

import org.metron.drivers.server.AgentClientService;
import org.metron.drivers.server.MetronDeviceIds;
import org.onlab.util.ItemNotFoundException;
import org.onosproject.mastership.MastershipService;
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

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.onlab.util.Tools.groupedThreads;
import static org.onosproject.net.config.basics.SubjectFactories.DEVICE_SUBJECT_FACTORY;
import static org.slf4j.LoggerFactory.getLogger;

/**
 * ONOS device provider for Metron servers: each {@code devices/metron:<host>:<port>/metron} netcfg entry becomes a
 * SERVER device driven by the {@code metron-server} driver, available while its agent answers, with its NICs as
 * ports and links to the switch ports netcfg names. No ONOS provider handles a scheme of its own (ONOS's general
 * device provider takes only {@code device:} ids), so without this one a netcfg'd server never becomes a device.
 * <p>
 * Liveness: a device's master probes its agent every {@value #DEFAULT_PROBE_MS} ms ({@code
 * -Dmetron.serverProbeMs}) and at once when the agent's channel connects or breaks, so a killed agent's device goes
 * unavailable, and a restarted one's available, within about a second (see {@link ServerDevices}).
 * <p>
 * ONOS's DeviceProvider contract, as ONOS 2.7's DeviceManager uses it: {@link #isReachable} answers whether the
 * agent answers, whatever role this node has (ONOS asks it to decide whether to keep a role it just granted);
 * {@link #roleChanged} acknowledges the role with {@code receivedRoleReply}, refusing MASTER for an agent this
 * node cannot reach (so ONOS gives the role to a node that can), and a new master starts probing at once.
 * <p>
 * Also offered as {@link ServerConfigErrors}: the {@code metron} entries ONOS refused (it logs nothing itself).
 */
@Component(immediate = true, service = ServerConfigErrors.class)
public class MetronServerProvider extends AbstractProvider implements DeviceProvider, ServerConfigErrors {

    public static final ProviderId PROVIDER_ID = new ProviderId(MetronDeviceIds.SCHEME, "org.metron.drivers.provider");
    public static final String DRIVER = "metron-server";
    static final long DEFAULT_PROBE_MS = 500;

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

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastership;

    private final RefusedServerConfigs refusals = new RefusedServerConfigs();
    private final ConfigFactory<DeviceId, MetronServerConfig> configFactory =
            new ConfigFactory<>(DEVICE_SUBJECT_FACTORY, MetronServerConfig.class, MetronServerConfig.KEY) {
                @Override
                public MetronServerConfig createConfig() {
                    return new MetronServerConfig(refusals);
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
                                    this::handler, DRIVER, new ServerDevices.Mastership() {
                                        @Override
                                        public boolean hasMaster(DeviceId id) {
                                            return mastership.getMasterFor(id) != null;
                                        }

                                        @Override
                                        public boolean isLocalMaster(DeviceId id) {
                                            return mastership.isLocalMaster(id);
                                        }
                                    });
        executor = Executors.newSingleThreadScheduledExecutor(groupedThreads("metron", "server-provider", log));
        netcfg.addListener(configListener);
        executor.execute(() -> netcfg.getSubjects(DeviceId.class, MetronServerConfig.class).forEach(this::apply));
        long probeMs = Long.getLong("metron.serverProbeMs", DEFAULT_PROBE_MS);
        servers.startProbing(executor, probeMs);
        log.info("Started (agents probed every {} ms and on every change of their channel)", probeMs);
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

    /**
     * Declares, re-declares or forgets a server from its netcfg entry; a bad entry is logged naming the fault. Never
     * throws: it runs for each entry in turn at start-up, where one server's fault must not leave the next ones
     * undeclared (this executor's tasks would drop the exception unlogged).
     */
    private void apply(DeviceId id) {
        MetronServerConfig cfg = netcfg.getConfig(id, MetronServerConfig.class);
        if (cfg == null) {
            servers.forget(id);
            return;
        }
        try {
            cfg.check();
            servers.declare(id, cfg.endpoint(), cfg.nics());
        } catch (InvalidServerConfigException e) {
            // valid when ONOS applied it, not now (a TLS file gone meanwhile): refused all the same
            refusals.refused(e.device(), e.field(), e.reason());
        } catch (RuntimeException e) {
            log.warn("Metron server {}: applying its netcfg entry failed: {}", id, e.toString());
        }
    }

    @Override
    public List<Refused> refused() {
        return refusals.refused();
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

    /**
     * Agents have no arbitration of their own, so the role ONOS gives is the role this node has, with one
     * exception: MASTER of an agent this node cannot reach is refused (replied NONE), which ONOS's DeviceManager
     * answers by giving the role up for another node. A new master probes at once, and from then on.
     */
    @Override
    public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
        if (!servers.declared().contains(deviceId)) {
            log.warn("Role {} for {}, which no netcfg declares: refused", newRole, deviceId);
            deviceProviderService.receivedRoleReply(deviceId, newRole, MastershipRole.NONE);
            return;
        }
        boolean refuse = newRole == MastershipRole.MASTER && !servers.isConnected(deviceId);
        MastershipRole got = refuse ? MastershipRole.NONE : newRole;
        handler(deviceId).behaviour(DeviceHandshaker.class).roleChanged(got);
        if (refuse) {
            log.warn("{}: MASTER refused, its agent does not answer this node", deviceId);
        }
        deviceProviderService.receivedRoleReply(deviceId, newRole, got);
        if (got == MastershipRole.MASTER) {
            triggerProbe(deviceId);
        }
    }

    /** Whether the agent answers (this node's last probe, its channel where another node probes); any role. */
    @Override
    public boolean isReachable(DeviceId deviceId) {
        return servers.isConnected(deviceId);
    }

    /**
     * ONOS calls this on the device's master. An agent's NICs are DPDK ports a chain's pipeline owns: nothing
     * outside the agent may take them down, so the request is refused (logged, nothing changes).
     */
    @Override
    public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
        log.warn("{}: a Metron server's NIC ports cannot be {} from ONOS (port {}): request ignored",
                 deviceId, enable ? "enabled" : "disabled", portNumber);
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
