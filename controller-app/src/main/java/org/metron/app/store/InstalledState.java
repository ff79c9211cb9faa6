package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Everything a deployed chain has installed: what removal (on this or any other controller instance) must take
 * away. Stored as an {@link InstalledRecord} (flow ids and roles); the rules themselves are read from the devices
 * ({@link InstalledView}). A device that could not be read (unreachable, no master) keeps its recorded ids in
 * {@link #unread()}, so nothing it may still hold is forgotten.
 */
public final class InstalledState {
    private final ChainId chainId;
    private final DeviceId server;
    private final List<InstalledRule> switchRules;
    private final List<Long> nicRuleIds;
    private final boolean pipeline;
    // transient: not part of the scaling journal's stored form (written with Kryo's field serializer)
    private final transient Map<DeviceId, InstalledRecord.DeviceRules> unread;
    private final transient Map<DeviceId, String> unreadWhy;

    /**
     * @param server the server whose agent holds the pipeline and NIC rules; empty for a fully offloaded chain
     */
    public InstalledState(ChainId chainId, Optional<DeviceId> server, List<InstalledRule> switchRules,
                          List<Long> nicRuleIds, boolean pipeline) {
        this(chainId, server, switchRules, nicRuleIds, pipeline, Map.of(), Map.of());
    }

    /**
     * @param unread     recorded rules of devices that could not be read, by device
     * @param unreadWhy  why each of them could not be read
     */
    public InstalledState(ChainId chainId, Optional<DeviceId> server, List<InstalledRule> switchRules,
                          List<Long> nicRuleIds, boolean pipeline, Map<DeviceId, InstalledRecord.DeviceRules> unread,
                          Map<DeviceId, String> unreadWhy) {
        this.unread = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(unread));
        this.unreadWhy = Map.copyOf(unreadWhy);
        this.chainId = Objects.requireNonNull(chainId);
        this.server = server.orElse(null);
        this.switchRules = ImmutableList.copyOf(switchRules);
        this.nicRuleIds = ImmutableList.copyOf(nicRuleIds);
        this.pipeline = pipeline;
    }

    public ChainId chainId() {
        return chainId;
    }

    public Optional<DeviceId> server() {
        return Optional.ofNullable(server);
    }

    public List<InstalledRule> switchRules() {
        return switchRules;
    }

    /** The same state with other switch rules (devices not read stay as recorded). */
    public InstalledState withSwitchRules(List<InstalledRule> rules) {
        return new InstalledState(chainId, server(), rules, nicRuleIds, pipeline, unread(), unreadWhy());
    }

    /** Recorded rules of the devices that could not be read when this state was read: still theirs. */
    public Map<DeviceId, InstalledRecord.DeviceRules> unread() {
        return unread == null ? Map.of() : unread;
    }

    /** Why each {@link #unread()} device could not be read. */
    public Map<DeviceId, String> unreadWhy() {
        return unreadWhy == null ? Map.of() : unreadWhy;
    }

    /** Every device the chain has rules on, read or not, in install order (unread ones after). */
    public Set<DeviceId> devices() {
        Set<DeviceId> out = new LinkedHashSet<>();
        switchRules.forEach(r -> out.add(r.rule().deviceId()));
        out.addAll(unread().keySet());
        return out;
    }

    public List<Long> nicRuleIds() {
        return nicRuleIds;
    }

    /** Whether the pipeline (pipeline id = chain id) runs on the server. */
    public boolean pipeline() {
        return pipeline;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof InstalledState)) {
            return false;
        }
        InstalledState s = (InstalledState) o;
        return chainId.equals(s.chainId) && Objects.equals(server, s.server) && switchRules.equals(s.switchRules)
                && nicRuleIds.equals(s.nicRuleIds) && pipeline == s.pipeline && unread().equals(s.unread());
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, server, switchRules, nicRuleIds, pipeline);
    }
}
