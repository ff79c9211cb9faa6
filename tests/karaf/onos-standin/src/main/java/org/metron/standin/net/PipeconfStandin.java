package org.metron.standin.net;

import com.google.common.collect.ImmutableList;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.model.PiPipeconfId;
import org.onosproject.net.pi.service.PiPipeconfEvent;
import org.onosproject.net.pi.service.PiPipeconfListener;
import org.onosproject.net.pi.service.PiPipeconfService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * PiPipeconfService (core-net's PiPipeconfManager stand-in): registers pipeconfs (a second registration of an id
 * is refused, as in ONOS), binds them to devices, fires REGISTERED/UNREGISTERED. Merged drivers are not built
 * (getMergedDriver answers null): no P4Runtime device is controlled here.
 */
@Component(immediate = true, service = PiPipeconfService.class)
public class PipeconfStandin extends AbstractListenerManager<PiPipeconfEvent, PiPipeconfListener>
        implements PiPipeconfService {
    private final Map<PiPipeconfId, PiPipeconf> pipeconfs = new ConcurrentHashMap<>();
    private final Map<DeviceId, PiPipeconfId> bindings = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(PiPipeconfEvent.class, listenerRegistry);
    }

    @Deactivate
    protected void deactivate() {
        dispatcher.removeSink(PiPipeconfEvent.class);
    }

    @Override
    public void register(PiPipeconf pipeconf) {
        if (pipeconfs.putIfAbsent(pipeconf.id(), pipeconf) != null) {
            throw new IllegalStateException("Pipeconf " + pipeconf.id() + " is already registered");
        }
        post(new PiPipeconfEvent(PiPipeconfEvent.Type.REGISTERED, pipeconf));
    }

    @Override
    public void unregister(PiPipeconfId id) {
        if (pipeconfs.remove(id) == null) {
            throw new IllegalStateException("Pipeconf " + id + " is not registered");
        }
        post(new PiPipeconfEvent(PiPipeconfEvent.Type.UNREGISTERED, id));
    }

    @Override
    public Iterable<PiPipeconf> getPipeconfs() {
        return ImmutableList.copyOf(pipeconfs.values());
    }

    @Override
    public Optional<PiPipeconf> getPipeconf(PiPipeconfId id) {
        return Optional.ofNullable(pipeconfs.get(id));
    }

    @Override
    public Optional<PiPipeconf> getPipeconf(DeviceId deviceId) {
        return ofDevice(deviceId).map(pipeconfs::get);
    }

    @Override
    public void bindToDevice(PiPipeconfId id, DeviceId deviceId) {
        bindings.put(deviceId, id);
    }

    @Override
    public String getMergedDriver(DeviceId deviceId, PiPipeconfId id) {
        return null;
    }

    @Override
    public Optional<PiPipeconfId> ofDevice(DeviceId deviceId) {
        return Optional.ofNullable(bindings.get(deviceId));
    }
}
