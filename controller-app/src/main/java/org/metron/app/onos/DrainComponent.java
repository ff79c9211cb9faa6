package org.metron.app.onos;

import org.metron.app.api.DrainReport;
import org.metron.app.api.DrainService;
import org.metron.app.scaling.ScalingService;
import org.metron.app.scaling.ServerDrain;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStoreService;
import org.onosproject.net.DeviceId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;

/**
 * Server drains inside ONOS (docs/failover.md#planned-restart-drain): the same {@link ServerDrain} the embedded host
 * runs, over the instance's one chain store (whose drained record every instance's placement reads) and scaling's
 * moves and merges ({@link ScalingComponent}, asked of a chain's owner when another instance owns it), offered as {@link DrainService} to the REST resources and the CLI.
 */
@Component(immediate = true, service = DrainService.class)
public class DrainComponent implements DrainService {
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ChainStoreService chainStores;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ServerRegistry servers;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ScalingService scaling;

    private volatile ServerDrain drains;

    @Activate
    protected void activate() {
        drains = new ServerDrain(chainStores.chainStore(), servers, scaling::move, scaling::merge,
                System::currentTimeMillis);
    }

    @Override
    public DrainReport drain(DeviceId server) {
        return drains.drain(server);
    }

    @Override
    public DrainReport undrain(DeviceId server, boolean moveBack) {
        return drains.undrain(server, moveBack);
    }

    @Override
    public Map<DeviceId, Long> drained() {
        return drains.drained();
    }
}
