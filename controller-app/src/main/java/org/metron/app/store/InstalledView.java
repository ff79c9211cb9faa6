package org.metron.app.store;

import org.metron.app.api.ChainId;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.SwitchProgrammer;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The chains' installed state over a map of {@link InstalledRecord}s: a write keeps the flow ids and roles, a read
 * takes the rules with those ids from the devices ({@link SwitchProgrammer#entries}: ONOS's flow-rule store, the
 * embedded host's OpenFlow tables). A recorded rule the device no longer holds (it restarted, someone deleted
 * it) is not installed any more; a device that cannot be read keeps its recorded ids as
 * {@link InstalledState#unread()}. Records an older version stored with the rules themselves ({@link
 * InstalledState}) read as their ids, and are written back as records.
 */
final class InstalledView implements MetronMap<ChainId, InstalledState> {
    private static final Logger log = LoggerFactory.getLogger(InstalledView.class);
    private final MetronMap<ChainId, Object> records;
    private final SwitchProgrammer switches;
    private volatile BiFunction<ChainId, List<InstalledRule>, List<InstalledRule>> plain = (id, rules) -> rules;

    InstalledView(MetronMap<ChainId, Object> records, SwitchProgrammer switches) {
        this.records = Objects.requireNonNull(records);
        this.switches = Objects.requireNonNull(switches);
    }

    /** The stored records themselves, without reading any device. */
    Map<ChainId, InstalledRecord> records() {
        Map<ChainId, InstalledRecord> out = new LinkedHashMap<>();
        records.snapshot().forEach((k, v) -> out.put(k, record(v)));
        return out;
    }

    void readRulesAs(BiFunction<ChainId, List<InstalledRule>, List<InstalledRule>> plain) {
        this.plain = Objects.requireNonNull(plain);
    }

    /** One stored record, without reading any device. */
    Optional<InstalledRecord> record(ChainId id) {
        return records.get(id).map(v -> record(v.value()));
    }

    private static InstalledRecord record(Object stored) {
        return stored instanceof InstalledState ? InstalledRecord.of((InstalledState) stored)
                : (InstalledRecord) stored;
    }

    /** Reads a record's rules from its devices; {@code read} caches each device's table for one call. */
    private InstalledState resolve(Object stored, Map<DeviceId, Object> read) {
        InstalledRecord r = record(stored);
        List<InstalledRule> rules = new ArrayList<>();
        Map<DeviceId, InstalledRecord.DeviceRules> unread = new LinkedHashMap<>();
        Map<DeviceId, String> why = new HashMap<>();
        for (InstalledRecord.DeviceRules d : r.devices()) {
            Object table = read.computeIfAbsent(d.device(), this::table);
            if (table instanceof String) {
                unread.put(d.device(), d);
                why.put(d.device(), (String) table);
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<Long, FlowRule> byId = (Map<Long, FlowRule>) table;
            for (int i = 0; i < d.size(); i++) {
                FlowRule rule = byId.get(d.id(i));
                if (rule != null) {
                    rules.add(new InstalledRule(d.role(i), rule));
                }
            }
        }
        return new InstalledState(r.chainId(), r.server(), plain.apply(r.chainId(), rules), r.nicRuleIds(),
                r.pipeline(), unread, why);
    }

    /**
     * Metron's rules on a device by flow id, or why it could not be read. PENDING_ADD entries are installed (ONOS
     * installs them again until the device has them), and so are PENDING_REMOVE ones: their removal is not
     * confirmed (a removal whose batch failed leaves them so, and the switch may still hold them), so a removal
     * retried later asks again instead of taking them for gone. REMOVED and FAILED entries are not installed.
     */
    private Object table(DeviceId device) {
        try {
            Map<Long, FlowRule> out = new HashMap<>();
            for (FlowEntry e : switches.entries(device)) {
                if (e.state() != FlowEntry.FlowEntryState.REMOVED && e.state() != FlowEntry.FlowEntryState.FAILED) {
                    out.put(e.id().value(), new DefaultFlowRule(e));
                }
            }
            return out;
        } catch (RuntimeException e) {
            log.debug("Flow entries of {} not read: {}", device, e.toString());
            return device + " could not be read: " + (e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    private Versioned<InstalledState> resolve(Versioned<Object> v) {
        return new Versioned<>(resolve(v.value(), new HashMap<>()), v.version(), v.creationTime());
    }

    @Override
    public Optional<Versioned<InstalledState>> get(ChainId key) {
        return records.get(key).map(this::resolve);
    }

    @Override
    public boolean putIfAbsent(ChainId key, InstalledState value) {
        return records.putIfAbsent(key, InstalledRecord.of(value));
    }

    @Override
    public boolean replace(ChainId key, long version, InstalledState value) {
        return records.replace(key, version, InstalledRecord.of(value));
    }

    @Override
    public void put(ChainId key, InstalledState value) {
        records.put(key, InstalledRecord.of(value));
    }

    /** Answers the removed record without reading its devices: each device's ids as {@link InstalledState#unread}. */
    @Override
    public Optional<InstalledState> remove(ChainId key) {
        return records.remove(key).map(InstalledView::record).map(r -> {
            Map<DeviceId, InstalledRecord.DeviceRules> ids = new LinkedHashMap<>();
            Map<DeviceId, String> why = new HashMap<>();
            r.devices().forEach(d -> {
                ids.put(d.device(), d);
                why.put(d.device(), "not read (record removed)");
            });
            return new InstalledState(r.chainId(), r.server(), List.of(), r.nicRuleIds(), r.pipeline(), ids, why);
        });
    }

    /** Every chain's state, each device read once. */
    @Override
    public Map<ChainId, InstalledState> snapshot() {
        Map<DeviceId, Object> read = new HashMap<>();
        Map<ChainId, InstalledState> out = new LinkedHashMap<>();
        records.snapshot().forEach((k, v) -> out.put(k, resolve(v, read)));
        return out;
    }

    @Override
    public void addListener(Consumer<ChainId> changed) {
        records.addListener(changed);
    }

    @Override
    public void removeListener(Consumer<ChainId> changed) {
        records.removeListener(changed);
    }
}
