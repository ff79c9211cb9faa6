package org.metron.embedded.contract;

import org.metron.app.onos.OnosStoreFactory;
import org.metron.app.spi.StoreFactory;
import org.metron.standin.CoreStandin;
import org.metron.standin.cluster.AtomixNode;
import org.metron.standin.store.StorageStandin;

/**
 * ONOS's implementation: {@link OnosStoreFactory} over a StorageService. ONOS's own StorageService
 * (onos-core-primitives over Atomix) is not on Maven Central; tests/karaf/onos-standin's {@link StorageStandin}
 * stands in for it in the Karaf tests, so the contract holds both to the embedded host's maps. Single node here
 * (no Atomix cluster): the stand-in's maps then keep values encoded with the map's serializer, as ONOS's
 * ConsistentMap does, rather than ONOS's test adapter (TestConsistentMap), which keeps the objects themselves.
 */
public class OnosStoreContractTest extends MetronMapContract {
    @Override
    protected StoreFactory factory() {
        AtomixNode noCluster = new AtomixNode();
        StorageStandin storage = new StorageStandin();
        set(storage, "atomixNode", noCluster);
        CoreStandin core = new CoreStandin();
        set(core, "atomixNode", noCluster);
        OnosStoreFactory f = new OnosStoreFactory();
        set(f, "storageService", storage);
        set(f, "coreService", core);
        return f;
    }

    /** Binds an OSGi @Reference field, as SCR does. */
    static void set(Object component, String field, Object service) {
        // a reference may be declared by a superclass (ONOS's AbstractDriverLoader's driverAdminService)
        for (Class<?> c = component.getClass(); c != null; c = c.getSuperclass()) {
            try {
                java.lang.reflect.Field f = c.getDeclaredField(field);
                f.setAccessible(true);
                f.set(component, service);
                return;
            } catch (NoSuchFieldException e) {
                // look further up
            } catch (ReflectiveOperationException e) {
                throw new AssertionError("cannot bind " + field + " of " + component.getClass().getName(), e);
            }
        }
        throw new AssertionError(component.getClass().getName() + " has no field " + field);
    }
}
