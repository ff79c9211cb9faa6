package org.metron.app.onos;

import org.metron.app.impl.OwnedChainMoves;
import org.metron.app.impl.CompiledChains;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.ServerLoss;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.NetworkView;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.StoreFactory;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStoreService;
import org.metron.app.scaling.IngressWatch;
import org.metron.app.scaling.LoadMonitor;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.scaling.ScalingPolicy;
import org.metron.app.scaling.ScalingService;
import org.metron.app.scaling.ScalingServiceDelegate;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Scaling inside ONOS: the same {@link ScalingManager} the embedded host runs, over the SPI components and the
 * instance's one {@link ChainStoreService} (shared with {@link MetronComponent}, so a split and a remove of the
 * same chain serialize), offered as {@link ScalingService} to the REST resources and the CLI. Only the instance
 * leading a chain changes it. Also offered as {@link ServerLoss}: {@link MetronComponent} hands it the servers it
 * finds lost, whose scaled-out groups come back.
 */
@Component(immediate = true, service = {ScalingService.class, ServerLoss.class})
public class ScalingComponent extends ScalingServiceDelegate {
    private final Logger log = LoggerFactory.getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected SwitchProgrammer switches;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ServerRegistry servers;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected Leadership leadership;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ChainStoreService chainStores;

    /** The scaling journal's and history's maps. */
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected StoreFactory storeFactory;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CompiledChains compiled;

    /**
     * The chain manager's moves ({@link MetronComponent}), run for the moves asked of this instance as an owner, and
     * for a split, the take-back of a failover move readied for its chain.
     */
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected OwnedChainMoves moves;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkView network;

    @Activate
    protected void activate() {
        ApplicationId app = coreService.registerApplication(OnosSwitchProgrammer.APP_NAME);
        ScalingManager m = new ScalingManager(chainStores.chainStore(), storeFactory, servers, switches, compiled,
                moves, app, MetronComponent.STEP_TIMEOUT, ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS,
                leadership, System::currentTimeMillis, Optional.of(this::rxPackets), IngressWatch.INTERVAL_MS,
                Optional.of(new RulePlanner(app, network)));
        log.info("Recovered {} unfinished scaling operation(s)", m.start().size());
        delegate(m);
    }

    /** ONOS's own port statistics (collected by its device providers' polling). */
    private CompletableFuture<Map<Long, Long>> rxPackets(DeviceId device) {
        Map<Long, Long> out = new HashMap<>();
        deviceService.getPortStatistics(device).forEach(p -> out.put(p.portNumber().toLong(), p.packetsReceived()));
        return CompletableFuture.completedFuture(out);
    }

    @Deactivate
    protected void deactivate() {
        ScalingManager m = delegate(null);
        if (m != null) {
            m.close();
        }
        log.info("Stopped");
    }
}
