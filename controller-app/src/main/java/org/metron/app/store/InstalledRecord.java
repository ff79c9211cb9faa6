package org.metron.app.store;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.metron.app.api.RuleInfo.Role;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * What a chain installed, as stored: what the switch layer cannot tell. The switches (ONOS's flow-rule store, the
 * embedded host's OpenFlow tables) hold each rule's match, actions and counters under its flow id (= OpenFlow
 * cookie, {@code FlowIds}); they cannot tell which chain a rule serves or why. So the record keeps, per device in
 * install order, the flow ids of the chain's rules with their roles, plus the server part (server, NIC rule ids,
 * whether a pipeline runs). {@link InstalledView} turns it back into an {@link InstalledState} by reading the
 * devices.
 */
public final class InstalledRecord {
    private final ChainId chainId;
    private final DeviceId server;
    private final List<DeviceRules> devices;
    private final List<Long> nicRuleIds;
    private final boolean pipeline;

    public InstalledRecord(ChainId chainId, Optional<DeviceId> server, List<DeviceRules> devices,
                           List<Long> nicRuleIds, boolean pipeline) {
        this.chainId = Objects.requireNonNull(chainId);
        this.server = server.orElse(null);
        this.devices = ImmutableList.copyOf(devices);
        this.nicRuleIds = ImmutableList.copyOf(nicRuleIds);
        this.pipeline = pipeline;
    }

    /** The record of a state: its rules' ids by device (in rule order), and the ids of devices it could not read. */
    public static InstalledRecord of(InstalledState s) {
        // one id per device once: a re-tagged rule keeps its id (same match), and a device holds one entry per id,
        // so a state listing the old and the new form (scaling's union) names that one entry
        Map<DeviceId, List<InstalledRule>> byDevice = new LinkedHashMap<>();
        Set<List<Object>> seen = new HashSet<>();
        s.switchRules().stream().filter(r -> seen.add(List.of(r.rule().deviceId(), r.rule().id())))
                .forEach(r -> byDevice.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r));
        List<DeviceRules> devices = new ArrayList<>();
        byDevice.forEach((d, rules) -> {
            long[] ids = new long[rules.size()];
            byte[] roles = new byte[rules.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = rules.get(i).rule().id().value();
                roles[i] = (byte) rules.get(i).role().ordinal();
            }
            devices.add(new DeviceRules(d, ids, roles));
        });
        s.unread().forEach((d, u) -> {
            if (!byDevice.containsKey(d)) {
                devices.add(u);
            }
        });
        return new InstalledRecord(s.chainId(), s.server(), devices, s.nicRuleIds(), s.pipeline());
    }

    public ChainId chainId() {
        return chainId;
    }

    public Optional<DeviceId> server() {
        return Optional.ofNullable(server);
    }

    /** Devices in install order (the offload device last), each with the ids of the chain's rules there. */
    public List<DeviceRules> devices() {
        return devices;
    }

    public List<Long> nicRuleIds() {
        return nicRuleIds;
    }

    public boolean pipeline() {
        return pipeline;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof InstalledRecord)) {
            return false;
        }
        InstalledRecord r = (InstalledRecord) o;
        return chainId.equals(r.chainId) && Objects.equals(server, r.server) && devices.equals(r.devices)
                && nicRuleIds.equals(r.nicRuleIds) && pipeline == r.pipeline;
    }

    @Override
    public int hashCode() {
        return Objects.hash(chainId, server, devices, nicRuleIds, pipeline);
    }

    /** The flow ids (with roles) of a chain's rules on one device, in install order. */
    public static final class DeviceRules {
        private static final Role[] ROLES = Role.values();
        private final DeviceId device;
        private final long[] ids;
        private final byte[] roles;

        public DeviceRules(DeviceId device, long[] ids, byte[] roles) {
            if (ids.length != roles.length) {
                throw new IllegalArgumentException(ids.length + " ids, " + roles.length + " roles");
            }
            this.device = Objects.requireNonNull(device);
            this.ids = ids.clone();
            this.roles = roles.clone();
        }

        public DeviceId device() {
            return device;
        }

        public int size() {
            return ids.length;
        }

        public long id(int i) {
            return ids[i];
        }

        public Role role(int i) {
            return ROLES[roles[i]];
        }

        long[] ids() {
            return ids;
        }

        byte[] roles() {
            return roles;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof DeviceRules && ((DeviceRules) o).device.equals(device)
                    && Arrays.equals(((DeviceRules) o).ids, ids) && Arrays.equals(((DeviceRules) o).roles, roles);
        }

        @Override
        public int hashCode() {
            return Objects.hash(device, Arrays.hashCode(ids), Arrays.hashCode(roles));
        }

        @Override
        public String toString() {
            return device + ": " + ids.length + " rules";
        }
    }
}
