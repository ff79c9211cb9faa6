package org.metron.standin;

import org.onosproject.event.DefaultEventSinkRegistry;
import org.onosproject.event.Event;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.event.EventSink;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Stand-in for core-net's CoreEventDispatcher: every posted event is delivered, in posting order, on one thread to
 * the sink registered for its class (the ListenerRegistry of the service that posted it).
 */
@Component(immediate = true, service = EventDeliveryService.class)
public class EventDispatcher extends DefaultEventSinkRegistry implements EventDeliveryService {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-events"));
    private volatile long dispatchTimeLimit = 2000;

    @Deactivate
    protected void deactivate() {
        executor.shutdownNow();
    }

    @Override
    @SuppressWarnings("unchecked")
    public void post(Event event) {
        executor.execute(() -> {
            EventSink<Event> sink = getSink((Class<Event>) event.getClass());
            if (sink == null) {
                log.warn("no sink for event {}", event);
                return;
            }
            try {
                sink.process(event);
            } catch (RuntimeException e) {
                log.warn("sink for {} failed on {}", event.getClass().getSimpleName(), event, e);
            }
        });
    }

    @Override
    public void setDispatchTimeLimit(long millis) {
        dispatchTimeLimit = millis;
    }

    @Override
    public long getDispatchTimeLimit() {
        return dispatchTimeLimit;
    }
}
