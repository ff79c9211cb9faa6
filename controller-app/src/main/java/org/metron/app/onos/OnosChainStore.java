package org.metron.app.onos;

import org.metron.app.spi.StoreFactory;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.ChainStoreService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

/**
 * The instance's one {@link ChainStore} as an OSGi service, so {@link MetronComponent} and the scaling component
 * serialize on the same per-chain monitors and reservation lock (the embedded host passes one object to both).
 */
@Component(immediate = true, service = ChainStoreService.class)
public class OnosChainStore implements ChainStoreService {

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected StoreFactory storeFactory;

    /** Where the chains' switch rules are read (ONOS's flow-rule store): the store keeps only their ids. */
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected SwitchProgrammer switchProgrammer;

    private ChainStore store;

    @Activate
    protected void activate() {
        store = new ChainStore(storeFactory, switchProgrammer);
    }

    @Override
    public ChainStore chainStore() {
        return store;
    }
}
