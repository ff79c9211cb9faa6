package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import org.onosproject.net.driver.DefaultDriver;
import org.onosproject.net.driver.DefaultDriverProvider;
import org.onosproject.net.driver.DefaultDriverProviderService;
import org.onosproject.net.driver.DriverAdminService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

/**
 * Stand-in for ONOS's drivers-default app: registers the "default" driver (without the OpenFlow behaviours the
 * real one has: no switch is controlled here) and offers DefaultDriverProviderService, which every
 * AbstractDriverLoader (Metron's included) waits for.
 */
@Component(immediate = true, service = DefaultDriverProviderService.class)
public class DefaultDriversStandin implements DefaultDriverProviderService {
    private final DefaultDriverProvider provider = new DefaultDriverProvider();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DriverAdminService drivers;

    @Activate
    protected void activate() {
        provider.addDrivers(ImmutableSet.of(new DefaultDriver("default", ImmutableList.of(), "ON.Lab", "0.0.1",
                                                              "0.0.1", ImmutableMap.of(), ImmutableMap.of())));
        drivers.registerProvider(provider);
    }

    @Deactivate
    protected void deactivate() {
        drivers.unregisterProvider(provider);
    }
}
