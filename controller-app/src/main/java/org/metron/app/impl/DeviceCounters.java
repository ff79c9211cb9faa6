package org.metron.app.impl;

import org.metron.app.spi.SwitchProgrammer;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The flow entries of the devices one view reads, each device read once. A device whose read fails (ONOS's
 * FlowRuleManager throws for an available device with no master, "There is no master for available device"; an
 * unavailable device; any other error) does not fail the view: its entries are unknown and {@link #error} says
 * why, so metrics, REST, CLI and GUI answer with what they know.
 */
final class DeviceCounters {
    private static final Logger log = LoggerFactory.getLogger(DeviceCounters.class);

    private final SwitchProgrammer switches;
    private final Map<DeviceId, Map<FlowId, FlowEntry>> entries = new HashMap<>();
    private final Map<DeviceId, String> errors = new HashMap<>();

    DeviceCounters(SwitchProgrammer switches) {
        this.switches = Objects.requireNonNull(switches);
    }

    /** The device's entry of that id; null when the device has none or could not be read. */
    FlowEntry entry(DeviceId device, FlowId id) {
        read(device);
        Map<FlowId, FlowEntry> m = entries.get(device);
        return m == null ? null : m.get(id);
    }

    /** Why the device could not be read; empty when it was. */
    String error(DeviceId device) {
        read(device);
        return errors.getOrDefault(device, "");
    }

    private void read(DeviceId device) {
        if (entries.containsKey(device) || errors.containsKey(device)) {
            return;
        }
        try {
            entries.put(device, switches.entries(device).stream()
                    .collect(Collectors.toMap(FlowEntry::id, x -> x, (a, b) -> a)));
        } catch (RuntimeException e) {
            String why = AgentCalls.message(e);
            errors.put(device, why.isEmpty() ? e.getClass().getSimpleName() : why);
            log.debug("Flow entries of {} unknown: {}", device, why);
        }
    }
}
