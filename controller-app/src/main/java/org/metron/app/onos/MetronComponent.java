package org.metron.app.onos;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.Synthesis;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.NetworkView;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.StoreFactory;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.net.DeviceId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Metron inside ONOS: wires {@link ChainManager} to the SPI components and offers it as {@link MetronService}.
 * Deactivation keeps chains deployed (they are persistent state in the store, not session state).
 */
@Component(immediate = true, service = MetronService.class)
public class MetronComponent implements MetronService {
    /** Per agent call / per device batch. */
    static final Duration STEP_TIMEOUT = Duration.ofSeconds(10);

    private final Logger log = LoggerFactory.getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkView network;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected SwitchProgrammer switches;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ServerRegistry servers;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected Leadership leadership;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected StoreFactory storeFactory;

    private ChainManager manager;

    @Activate
    protected void activate() {
        ApplicationId appId = coreService.registerApplication(OnosSwitchProgrammer.APP_NAME);
        manager = new ChainManager(new ChainStore(storeFactory), servers, switches, leadership,
                new PlacementEngine(servers, network, switches, new SecureRandom(), STEP_TIMEOUT),
                new RulePlanner(appId, network), new Deployer(switches, STEP_TIMEOUT), STEP_TIMEOUT,
                Synthesis.SYNTHESIZER);
        log.info("Started");
    }

    @Deactivate
    protected void deactivate() {
        manager = null;
        log.info("Stopped");
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
    public void remove(ChainId id) {
        manager.remove(id);
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
    public Collection<TagAllocation> tags() {
        return manager.tags();
    }

    @Override
    public List<ServerInfo> servers() {
        return manager.servers();
    }

    @Override
    public List<RuleInfo> rules(DeviceId device) {
        return manager.rules(device);
    }
}
