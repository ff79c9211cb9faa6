package org.metron.drivers.server;

import org.onosproject.net.driver.AbstractDriverLoader;
import org.osgi.service.component.annotations.Component;

/** Registers the drivers of {@code metron-drivers.xml} ("metron-server") with ONOS. */
@Component(immediate = true)
public class MetronDriversLoader extends AbstractDriverLoader {

    public static final String DRIVERS_XML = "/metron-drivers.xml";

    public MetronDriversLoader() {
        super(DRIVERS_XML);
    }
}
