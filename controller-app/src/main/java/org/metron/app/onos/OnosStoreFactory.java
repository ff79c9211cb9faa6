package org.metron.app.onos;

import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.metron.app.store.ConsistentMetronMap;
import org.onlab.util.KryoNamespace;
import org.onosproject.core.CoreService;
import org.onosproject.store.service.ConsistentMapBuilder;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.StorageService;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

/** Metron's maps as ONOS ConsistentMaps (Atomix-backed, replicated, strongly consistent). */
@Component(immediate = true, service = StoreFactory.class)
public class OnosStoreFactory implements StoreFactory {

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected StorageService storageService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    @Override
    public <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace) {
        ConsistentMapBuilder<K, V> b = storageService.consistentMapBuilder();
        b.withName(name);
        b.withSerializer(Serializer.using(namespace));
        b.withApplicationId(coreService.registerApplication(OnosSwitchProgrammer.APP_NAME));
        return new ConsistentMetronMap<>(b.build());
    }
}
