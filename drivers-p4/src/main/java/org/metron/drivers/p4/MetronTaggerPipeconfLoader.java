package org.metron.drivers.p4;

import org.onosproject.net.pi.service.PiPipeconfService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

/** Registers the tagging pipeconf with ONOS while the drivers app is active. */
@Component(immediate = true)
public class MetronTaggerPipeconfLoader {

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected PiPipeconfService pipeconfService;

    @Activate
    protected void activate() {
        if (pipeconfService.getPipeconf(MetronTaggerPipeconf.ID).isEmpty()) {
            pipeconfService.register(MetronTaggerPipeconf.build());
        }
    }

    @Deactivate
    protected void deactivate() {
        if (pipeconfService.getPipeconf(MetronTaggerPipeconf.ID).isPresent()) {
            pipeconfService.unregister(MetronTaggerPipeconf.ID);
        }
    }
}
