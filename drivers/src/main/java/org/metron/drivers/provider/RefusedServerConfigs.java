package org.metron.drivers.provider;

import org.onosproject.net.DeviceId;
import org.slf4j.Logger;

import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import static org.slf4j.LoggerFactory.getLogger;

/**
 * Plain-Java {@link ServerConfigErrors}: told by {@link MetronServerConfig#isValid()} of each verdict, it logs a
 * refusal at WARN naming the device and the field (ONOS logs nothing for it) and keeps the latest one per device
 * until an entry of that device is accepted.
 */
public final class RefusedServerConfigs implements ServerConfigErrors, MetronServerConfig.Verdicts {

    private final Logger log = getLogger(getClass());
    private final Map<DeviceId, Refused> refused = new ConcurrentHashMap<>();
    private final Clock clock;

    public RefusedServerConfigs() {
        this(Clock.systemUTC());
    }

    RefusedServerConfigs(Clock clock) {
        this.clock = clock;
    }

    @Override
    public void refused(DeviceId device, String field, String reason) {
        Refused now = new Refused(device, field, reason, clock.instant());
        Refused before = refused.put(device, now);
        // ONOS may ask isValid() more than once for one upload: one WARN per distinct refusal
        if (before == null || !before.field().equals(field) || !before.reason().equals(reason)
                || now.time().toEpochMilli() - before.time().toEpochMilli() > 1000) {
            log.warn("Metron server netcfg for {} refused (ONOS answers 207 and applies nothing): field {}: {}",
                     device, MetronServerConfig.KEY + "." + field, reason);
        }
    }

    @Override
    public void accepted(DeviceId device) {
        if (refused.remove(device) != null) {
            log.info("Metron server netcfg for {} accepted: its earlier refusal is cleared", device);
        }
    }

    @Override
    public List<Refused> refused() {
        return refused.values().stream().sorted(Comparator.comparing(Refused::time).thenComparing(r -> r.device().toString()))
                .collect(Collectors.toUnmodifiableList());
    }
}
