package org.metron.embedded;

import org.metron.app.api.DrainService;
import org.metron.app.api.MetronService;
import org.metron.app.impl.AgentWatch;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.ChainOwnership;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.FencedServers;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.ServerFailover;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.scaling.IngressWatch;
import org.metron.app.scaling.LoadMonitor;
import org.metron.app.scaling.PortCounters;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.scaling.ScalingPolicy;
import org.metron.app.scaling.ScalingService;
import org.metron.app.scaling.ServerDrain;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.embedded.net.AgentServerRegistry;
import org.metron.embedded.net.EmbeddedNetworkView;
import org.metron.embedded.net.NetworkFile;
import org.metron.embedded.net.OpenFlowSwitchProgrammer;
import org.metron.embedded.net.RerouteTrigger;
import org.metron.openflow.OpenFlowController;
import org.metron.openflow.OpenFlowException;
import org.metron.embedded.store.DurableStoreFactory;
import org.metron.embedded.web.Credentials;
import org.metron.embedded.web.DashboardServlet;
import org.metron.embedded.web.HostServices;
import org.metron.embedded.web.WebServer;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.DefaultApplicationId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.onosproject.core.CoreService;
import org.onosproject.codec.impl.CodecManager;
import org.onosproject.codec.CodecService;
import org.metron.app.rest.codec.MetronCodecs;
import org.metron.app.local.SingleAppCore;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * Metron on one machine: the controller-app's own {@link ChainManager}, wired to embedded implementations of
 * its SPI (network view from the topology + OpenFlow port status, switch programming over the OpenFlow 1.3
 * southbound, servers over the drivers' gRPC agent client, durable stores, single-instance leadership), its own
 * REST resources on Jetty and a dashboard. Everything it starts it stops in {@link #close()}.
 */
public final class EmbeddedHost implements AutoCloseable {
    /** The controller app's ONOS name; its id is fixed here (ONOS's CoreService assigns one at runtime). */
    public static final ApplicationId APP_ID = new DefaultApplicationId(0x4d, "org.metron.app");
    /** Per agent call and per switch batch, as inside ONOS. */
    public static final Duration STEP_TIMEOUT = Duration.ofSeconds(10);
    /** Written to the data directory once ready, for the CLI and scripts: REST URL, OpenFlow port, pid. */
    public static final String HOST_FILE = "host.json";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedHost.class);

    private final OpenFlowController openflow;
    private final AgentServerRegistry servers;
    private final WebServer web;
    private final ChainManager metron;
    private final ScalingManager scaling;
    private final AgentWatch watch;
    private final ServerFailover failover;
    private final ChainOwnership ownership;
    private RerouteTrigger reroutes;
    private final Path hostFile;
    private final String httpHost;

    public EmbeddedHost(HostOptions o) throws Exception {
        NetworkFile net = NetworkFile.read(o.state);
        Files.createDirectories(o.data);
        openflow = OpenFlowController.listen(o.openflow, STEP_TIMEOUT.toMillis());
        AgentServerRegistry registry = null;
        WebServer server = null;
        ScalingManager scaler = null;
        AgentWatch watcher = null;
        ServerFailover deadlines = null;
        ChainOwnership owner = null;
        try {
            awaitSwitches(net, o.switchWaitMs);
            registry = new AgentServerRegistry(net, o.agentTls);
            EmbeddedNetworkView view = new EmbeddedNetworkView(net, openflow);
            OpenFlowSwitchProgrammer switches = new OpenFlowSwitchProgrammer(openflow, APP_ID, o.failoverGroups);
            DurableStoreFactory stores = new DurableStoreFactory(o.data.resolve("store"));
            ChainStore chains = new ChainStore(stores, switches);
            SingleInstanceLeadership leadership = new SingleInstanceLeadership();
            // the core's view of the servers: pipeline changes carry this run's term (FencedAgent), as on ONOS
            ServerRegistry fenced = FencedServers.of(registry, leadership);
            ChainManager manager = new ChainManager(chains, fenced,
                    switches, leadership,
                    new PlacementEngine(fenced, view, switches, new SecureRandom(), STEP_TIMEOUT),
                    new RulePlanner(APP_ID, view), new Deployer(switches, STEP_TIMEOUT), STEP_TIMEOUT,
                    Synthesis.SYNTHESIZER);
            metron = manager;
            reroutes = new RerouteTrigger(manager, net, o.rerouteDelayMs);
            openflow.addListener(reroutes);
            // one load monitor for all chains; finishes or rolls back what a previous run left mid-operation
            // benchmarks compare against the original policy: -Dmetron.scaling.policy=original
            // -Dmetron.scaling.intervalMs=500 (e.g. through JAVA_TOOL_OPTIONS)
            scaler = new ScalingManager(chains, stores, fenced, switches, manager, manager, APP_ID,
                    STEP_TIMEOUT, ScalingPolicy.Params.named(System.getProperty("metron.scaling.policy", "metron")),
                    Integer.getInteger("metron.scaling.intervalMs", LoadMonitor.INTERVAL_MS),
                    leadership, System::currentTimeMillis, Optional.<PortCounters>of(switches),
                    Integer.getInteger("metron.scaling.portStatsMs", IngressWatch.INTERVAL_MS),
                    Optional.of(new RulePlanner(APP_ID, view)));
            scaler.start();
            // a lost server's scaled-out groups come back to their chains' servers (docs/scaling.md#restarts)
            manager.onServerLost(scaler);
            // redeploys what a restarted agent lost; -Dmetron.recovery.intervalMs sets how often agents are asked
            // and moves the chains of a server whose agent stays unreachable (-Dmetron.serverFailoverMs), readied
            // on other servers while that deadline runs (taken back if the agent answers in time): the ONOS
            // component's deadlines, told by the watch instead of device events; a deadline passed asks the agent
            // itself whether the server is still lost (ONOS asks its device's availability)
            AgentWatch w = new AgentWatch(fenced, new ServerRecovery(chains, manager, STEP_TIMEOUT), STEP_TIMEOUT);
            deadlines = new ServerFailover(manager, AgentWatch.configuredFailover(), id -> !w.answers(id));
            watcher = w.failover(deadlines).start(AgentWatch.configuredInterval());
            // its first round finishes what a previous run of the host left unsettled (a bring-up, a removal)
            owner = manager.ownership().start(Duration.ofMillis(ChainOwnership.SWEEP_MS));
            Credentials users = Credentials.loadOrCreate(o.data);
            // an operator's drain moves chains (the manager) and scaled-out groups (scaling) off a server
            DrainService drain = new ServerDrain(chains, fenced, scaler::move, scaler::merge, System::currentTimeMillis);
            server = new WebServer(o.http, HostServices.of(MetronService.class, metron)
                    .with(ScalingService.class, scaler).with(DrainService.class, drain)
                    .with(CodecService.class, codecs()).with(CoreService.class, new SingleAppCore(APP_ID)), users,
                    new DashboardServlet(metron, scaler, users, net, view));
            server.start();
        } catch (Exception | Error e) {
            if (reroutes != null) {
                openflow.removeListener(reroutes);
                reroutes.close();
            }
            if (server != null) {
                server.close();
            }
            if (scaler != null) {
                scaler.close();
            }
            if (owner != null) {
                owner.close();
            }
            if (watcher != null) {
                watcher.close();
            }
            if (deadlines != null) {
                deadlines.close();
            }
            if (registry != null) {
                registry.close();
            }
            openflow.close();
            throw e;
        }
        servers = registry;
        web = server;
        scaling = scaler;
        watch = watcher;
        failover = deadlines;
        ownership = owner;
        hostFile = o.data.resolve(HOST_FILE);
        httpHost = o.http.getAddress().getHostAddress();
        String json = String.format("{\"rest\": \"%s\", \"dashboard\": \"%s\", \"openflow_port\": %d, "
                + "\"pid\": %d, \"state\": \"%s\"}%n", restUrl(), dashboardUrl(), openflow.port(),
                ProcessHandle.current().pid(), o.state.toAbsolutePath());
        Path tmp = o.data.resolve(HOST_FILE + ".tmp");
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        Files.move(tmp, hostFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * ONOS's own CodecManager (its codecs for FlowRule, selector, treatment and the rest) with Metron's registered
     * from the same list the app's component registers inside ONOS: REST answers the same JSON on both hosts.
     */
    private static CodecService codecs() {
        CodecManager codecs = new CodecManager();
        codecs.activate();
        MetronCodecs.register(codecs);
        return codecs;
    }

    private void awaitSwitches(NetworkFile net, long waitMs) {
        long end = System.currentTimeMillis() + waitMs;
        for (var e : net.switches.entrySet()) {
            long left = Math.max(1, end - System.currentTimeMillis());
            try {
                openflow.await(OpenFlowSwitchProgrammer.dpid(e.getValue()).orElseThrow(), left);
            } catch (OpenFlowException ex) {
                log.warn("switch {} ({}) not connected yet; it becomes usable when it connects", e.getKey(),
                         e.getValue());
            }
        }
    }

    public MetronService metron() {
        return metron;
    }

    public int httpPort() {
        return web.port();
    }

    public String restUrl() {
        return "http://" + httpHost + ":" + web.port() + WebServer.REST_PATH;
    }

    public String dashboardUrl() {
        return "http://" + httpHost + ":" + web.port() + WebServer.UI_PATH + "/";
    }

    public int openflowPort() {
        return openflow.port();
    }

    @Override
    public void close() throws Exception {
        Files.deleteIfExists(hostFile);
        // Stop reacting to the network first: closing the listener disconnects every switch.
        openflow.removeListener(reroutes);
        reroutes.close();
        web.close();
        scaling.close();
        ownership.close();
        watch.close();
        failover.close();
        metron.close();
        servers.close();
        openflow.close();
    }

    public static void main(String[] args) throws Exception {
        HostOptions o;
        try {
            o = HostOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("metron-host: " + e.getMessage());
            System.exit(2);
            return;
        }
        EmbeddedHost host;
        try {
            host = new EmbeddedHost(o);
        } catch (Exception | Error e) {
            System.err.println("metron-host: cannot start: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                host.close();
            } catch (Exception e) {
                System.err.println("metron-host: error while stopping: " + e);
            }
            stopped.countDown();
        }, "metron-host-shutdown"));
        System.out.printf("metron-host: ready: REST %s, dashboard %s, OpenFlow port %d (%d switch(es) connected), "
                        + "%d chain(s) in the store%n", host.restUrl(), host.dashboardUrl(), host.openflowPort(),
                host.openflow.switches().size(), host.metron().chains().size());
        System.out.flush();
        stopped.await();
    }
}
