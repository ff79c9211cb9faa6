package org.metron.app.impl;

import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * The servers and switch rules views of {@link ChainManager} (REST, CLI, GUI, metrics): each answers with what it
 * can read; one server or device that cannot be read is marked so in the answer, never fails it.
 */
final class Inventory {
    private final ChainStore store;
    private final ServerRegistry servers;
    private final SwitchProgrammer switches;
    private final AgentCalls calls;

    Inventory(ChainStore store, ServerRegistry servers, SwitchProgrammer switches, Duration agentTimeout) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.switches = Objects.requireNonNull(switches);
        this.calls = new AgentCalls(agentTimeout);
    }

    public List<ServerInfo> servers() {
        List<ServerInfo> out = new ArrayList<>();
        // ask every agent at once, so one unreachable server costs one timeout, not one per server
        List<MetronServer> all = new ArrayList<>(servers.servers());
        List<CompletableFuture<ServerResources>> resources = new ArrayList<>();
        List<CompletableFuture<Stats>> loads = new ArrayList<>();
        for (MetronServer s : all) {
            // a call that throws instead of failing its future is that server's error, not the whole answer's
            resources.add(AgentCalls.started(() -> s.agent().getResources()));
            loads.add(AgentCalls.started(() -> s.agent().getStats("")));
        }
        for (int i = 0; i < all.size(); i++) {
            MetronServer s = all.get(i);
            try {
                ServerResources res = calls.await(resources.get(i), "resources of " + s.id());
                Stats stats = calls.await(loads.get(i), "load of " + s.id());
                Map<Integer, Double> load = new HashMap<>();
                stats.getCoresList().forEach(c -> load.put(c.getCore(), c.getLoad()));
                List<ServerInfo.CoreInfo> cores = res.getCoresList().stream()
                        .map(c -> new ServerInfo.CoreInfo(c.getId(), load.getOrDefault(c.getId(), 0.0),
                                c.getAvailable(), c.getPipelineId()))
                        .collect(Collectors.toList());
                List<ServerInfo.NicInfo> nics = res.getNicsList().stream()
                        .map(n -> new ServerInfo.NicInfo(n.getName(), n.getMac(), n.getLinkUp(), n.getMaxNicRules(),
                                NicDispatch.of(n)))
                        .collect(Collectors.toList());
                out.add(new ServerInfo(s.id(), s.agent().target(), true, "", cores, nics, drainedSince(s.id())));
            } catch (RuntimeException e) { // the agent's failure, or its answer's
                out.add(new ServerInfo(s.id(), s.agent().target(), false, AgentCalls.reason(e), List.of(), List.of(),
                        drainedSince(s.id())));
            }
        }
        return out;
    }

    private java.util.OptionalLong drainedSince(DeviceId server) {
        return store.drained().get(server).map(v -> java.util.OptionalLong.of(v.value().sinceMs()))
                .orElse(java.util.OptionalLong.empty());
    }

    public List<RuleInfo> rules(DeviceId device) {
        List<RuleInfo> out = new ArrayList<>();
        DeviceCounters counters = new DeviceCounters(switches);
        for (InstalledState st : store.installed().snapshot().values()) {
            for (InstalledRule r : st.switchRules()) {
                DeviceId dev = r.rule().deviceId();
                if (device != null && !device.equals(dev)) {
                    continue;
                }
                FlowEntry e = counters.entry(dev, r.rule().id());
                out.add(new RuleInfo(st.chainId(), r.role(), r.rule(), e == null ? -1 : e.packets(),
                        e == null ? -1 : e.bytes(), counters.error(dev)));
            }
        }
        return out;
    }
}
