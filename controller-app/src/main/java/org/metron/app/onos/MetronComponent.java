package org.metron.app.onos;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.impl.AgentWatch;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.ChainMoves;
import org.metron.app.impl.OwnedChainMoves;
import org.metron.app.impl.ChainOwnership;
import org.metron.app.impl.CompiledChains;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.FencedServers;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.ServerFailover;
import org.metron.app.impl.ServerLoss;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.impl.Synthesis;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.NetworkView;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.ChainStoreService;
import org.metron.synth.CompiledChain;
import org.onosproject.core.ApplicationId;
import org.onosproject.codec.CodecService;
import org.onosproject.core.CoreService;
import org.onlab.util.Tools;
import org.metron.drivers.server.MetronDeviceIds;
import org.metron.app.rest.codec.MetronCodecs;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.link.LinkEvent;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Metron inside ONOS: wires {@link ChainManager} to the SPI components and offers it as {@link MetronService};
 * a device going unavailable or a link going away reroutes the chains using it (on one worker thread, off the
 * event thread). Deactivation keeps chains deployed (they are persistent state in the store, not session state).
 */
@Component(immediate = true, service = {MetronService.class, CompiledChains.class, ChainMoves.class,
        OwnedChainMoves.class})
public class MetronComponent implements MetronService, CompiledChains, OwnedChainMoves {
    /** Per agent call / per device batch (scaling's too). */
    public static final Duration STEP_TIMEOUT = Duration.ofSeconds(10);

    private final Logger log = LoggerFactory.getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    /** Metron's JSON codecs are registered here while the app runs (REST and the CLI encode with them). */
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CodecService codecService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkView network;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected SwitchProgrammer switches;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ServerRegistry servers;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected Leadership leadership;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ChainStoreService chainStores;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkService linkService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastershipService;

    /** Scaling ({@code ScalingComponent}): brings back the groups scaled out to a lost server. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected volatile ServerLoss scaledOut;

    private final DeviceListener deviceListener = new InternalDeviceListener();
    private final LinkListener linkListener = new InternalLinkListener();
    private ScheduledExecutorService events;
    /**
     * The failover deadlines, on threads of their own: a lost server's chains move when its deadline passes and their
     * move is readied, never after a reroute or a restore that happens to be running on {@link #events} (measured in
     * the 3-node cluster test: a restore of the same server, queued by an availability flap while ONOS handed its
     * mastership on, held {@code events} for 4 s waiting on the dead agent, and the move started 4.1 s after the
     * device went unavailable instead of 1.5 s), nor after another server's move.
     */
    private ServerFailover failover;
    private ChainManager manager;
    private AgentWatch watch;
    private ServerRecovery recovery;
    private ChainOwnership ownership;

    @Activate
    protected void activate() {
        MetronCodecs.register(codecService);
        ApplicationId appId = coreService.registerApplication(OnosSwitchProgrammer.APP_NAME);
        ChainStore store = chainStores.chainStore();
        // the core's view of the servers: pipeline changes carry this instance's term of the chain (FencedAgent)
        ServerRegistry fenced = FencedServers.of(servers, leadership);
        manager = new ChainManager(store, fenced, switches, leadership,
                new PlacementEngine(fenced, network, switches, new SecureRandom(), STEP_TIMEOUT),
                new RulePlanner(appId, network), new Deployer(switches, STEP_TIMEOUT), STEP_TIMEOUT,
                Synthesis.SYNTHESIZER);
        // read when a server is lost: scaling may start after this component, or stop before it
        manager.onServerLost(server -> {
            ServerLoss s = scaledOut;
            return s == null ? List.of() : s.serverLost(server);
        });
        events = Executors.newSingleThreadScheduledExecutor(Tools.groupedThreads("metron", "reroute", log));
        // a server whose device is available again when its deadline has passed keeps its chains
        failover = new ServerFailover(manager, AgentWatch.configuredFailover(), s -> !deviceService.isAvailable(s));
        deviceService.addListener(deviceListener);
        linkService.addListener(linkListener);
        // restores what restarted agents lost, for the chains this instance leads
        recovery = new ServerRecovery(store, manager, STEP_TIMEOUT);
        watch = new AgentWatch(fenced, recovery, STEP_TIMEOUT).watching(mastershipService::isLocalMaster)
                .start(AgentWatch.configuredInterval());
        // runs for every chain; finishes what a stopped instance (or this one, before a restart) left unsettled
        ownership = manager.ownership().start(Duration.ofMillis(ChainOwnership.SWEEP_MS));
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() throws InterruptedException {
        deviceService.removeListener(deviceListener);
        linkService.removeListener(linkListener);
        ownership.close();
        watch.close();
        // let a reroute or a move in progress finish: stopping it halfway would leave rules of two paths
        events.shutdown();
        failover.close();
        events.awaitTermination(STEP_TIMEOUT.toMillis() * 4, TimeUnit.MILLISECONDS);
        manager.close();
        manager = null;
        MetronCodecs.unregister(codecService);
        log.info("Stopped");
    }

    @Override
    public CompiledChain compiled(ChainId id) {
        return manager.compiled(id);
    }

    @Override
    public void rulesChanged(ChainId id) {
        manager.rulesChanged(id);
    }

    @Override
    public DrainReport.Move move(ChainId id, java.util.Optional<DeviceId> to, String why) {
        return manager.move(id, to, why);
    }

    @Override
    public void dropReadied(ChainId id, String why) {
        manager.dropReadied(id, why);
    }

    @Override
    public org.metron.app.impl.ReadiedCores readiedCores() {
        return manager.readiedCores();
    }

    private void reroute(DeviceId device, String cause) {
        events.execute(() -> {
            List<ChainId> moved = manager.reroute(device, cause);
            if (!moved.isEmpty()) {
                log.info("Rerouted {} after {} (their rules on {})", moved, cause, device);
            }
        });
    }

    /** A device available again: what deleted chains left on it is removed now (agents: the agent watch too). */
    private void deviceBack(DeviceId device) {
        failover.back(device); // its deadline is called off; what was readied elsewhere for its chains is taken back
        events.execute(() -> {
            List<ChainId> gone = manager.retryRemovals(device::equals);
            if (!gone.isEmpty()) {
                log.info("Chains {} removed: {} is available again", gone, device);
            }
            // its agent may have restarted and lost what it ran: the chains this instance owns there come back (the
            // agent watch, on the device's master only, also sees a restart that left the device available)
            if (MetronDeviceIds.isMetronServer(device)) {
                servers.server(device).ifPresent(s -> {
                    try {
                        List<ChainId> restored = recovery.restore(s);
                        if (!restored.isEmpty()) {
                            log.info("Chains {} restored on {}: available again", restored, device);
                        }
                    } catch (RuntimeException e) {
                        // the owners' reconciliation of their DEGRADED chains tries again
                        log.warn("Restoring chains on {} failed: {}", device, e.getMessage());
                    }
                });
            }
        });
    }

    /** A device that went unavailable, or came back. */
    private class InternalDeviceListener implements DeviceListener {
        @Override
        public boolean isRelevant(DeviceEvent e) {
            return e.type() == DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED
                    || e.type() == DeviceEvent.Type.DEVICE_REMOVED;
        }

        @Override
        public void event(DeviceEvent e) {
            DeviceId id = e.subject().id();
            if (e.type() == DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED && deviceService.isAvailable(id)) {
                deviceBack(id);
                return;
            }
            if (MetronDeviceIds.isMetronServer(id)) {
                // a server holds no switch rules: nothing to reroute around it. Its chains are readied elsewhere at
                // once and move after the failover deadline (an agent restarting within it keeps its chains, and the
                // agent watch restores what it lost); each chain's move holds the chain's lock, so it does not race
                // a restore or reroute of the same chain running on events
                failover.suspected(id);
            } else {
                reroute(id, "device " + id + (e.type() == DeviceEvent.Type.DEVICE_REMOVED ? " removed"
                        : " unavailable"));
            }
        }
    }

    /** A link that went away: both its ends may carry chain rules pointing at it. */
    private class InternalLinkListener implements LinkListener {
        @Override
        public boolean isRelevant(LinkEvent e) {
            return e.type() == LinkEvent.Type.LINK_REMOVED;
        }

        @Override
        public void event(LinkEvent e) {
            DeviceId src = e.subject().src().deviceId();
            DeviceId dst = e.subject().dst().deviceId();
            // a link to a Metron server goes with the server (serverLost's case): no path around it reaches the
            // server, and the switch at its other end is healthy
            if (MetronDeviceIds.isMetronServer(src) || MetronDeviceIds.isMetronServer(dst)) {
                return;
            }
            String cause = "link " + e.subject().src() + " -> " + e.subject().dst() + " removed";
            // chains with a backup for the link go there (where their fast-failover groups already sent the
            // traffic); the others that send into it are rerouted around its ends
            events.execute(() -> {
                List<ChainId> moved = manager.rerouteLink(e.subject(), cause);
                if (!moved.isEmpty()) {
                    log.info("Rerouted {} after {}", moved, cause);
                }
            });
        }
    }

    @Override
    public Chain submit(String json) {
        return manager.submit(json);
    }

    @Override
    public Chain update(ChainId id, String json) {
        return manager.update(id, json);
    }

    @Override
    public Optional<Chain> remove(ChainId id) {
        return manager.remove(id);
    }

    @Override
    public ValidationReport validate(String json) {
        return manager.validate(json);
    }

    @Override
    public Collection<Chain> chains() {
        return manager.chains();
    }

    @Override
    public Optional<Chain> chain(ChainId id) {
        return manager.chain(id);
    }

    @Override
    public List<TrafficClassInfo> trafficClasses(ChainId id) {
        return manager.trafficClasses(id);
    }

    @Override
    public Collection<Placement> placements() {
        return manager.placements();
    }

    @Override
    public Optional<Placement> placement(ChainId id) {
        return manager.placement(id);
    }

    @Override
    public Collection<Placement> readied() {
        return manager.readied();
    }

    @Override
    public Collection<TagAllocation> tags() {
        return manager.tags();
    }

    @Override
    public List<ServerInfo> servers() {
        return manager.servers();
    }

    @Override
    public List<ServerConfigErrors.Refused> refusedServerConfigs() {
        return manager.refusedServerConfigs();
    }

    @Override
    public List<RuleInfo> rules(DeviceId device) {
        return manager.rules(device);
    }
}
