package org.metron.app.impl;


import org.metron.agent.v1.Core;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.synth.TagType;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.NetworkView;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.drivers.server.NicDispatch;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * Decides where a chain runs (paper §placement). Servers: power of two random choices — query the load of
 * two random servers, take the less loaded one that has the free cores and NICs, otherwise discard both and
 * draw again. Then the offload device: the first programmable device on the ingress→server path whose
 * profile and free rule capacity fit the chain's offload rules.
 */
public final class PlacementEngine {
    private final ServerRegistry servers;
    private final NetworkView network;
    private final SwitchProgrammer switches;
    private final Random random;
    private final AgentCalls calls;
    /**
     * Cores counted free on a server whatever its agent reports running there and whatever holds them: those failover
     * moves readied there hold (a dry run finding which to take back, {@link ReadiedCores}); none by default.
     */
    private final Function<DeviceId, Set<Integer>> reclaimable;

    /**
     * @param random       source of the random draws (seed it in tests for reproducible choices)
     * @param agentTimeout how long to wait for one agent's answer before counting it unreachable
     */
    public PlacementEngine(ServerRegistry servers, NetworkView network, SwitchProgrammer switches, Random random,
                           Duration agentTimeout) {
        this(servers, network, switches, random, agentTimeout, s -> Set.of());
    }

    private PlacementEngine(ServerRegistry servers, NetworkView network, SwitchProgrammer switches, Random random,
                            Duration agentTimeout, Function<DeviceId, Set<Integer>> reclaimable) {
        this.servers = Objects.requireNonNull(servers);
        this.network = Objects.requireNonNull(network);
        this.switches = Objects.requireNonNull(switches);
        this.random = Objects.requireNonNull(random);
        this.calls = new AgentCalls(agentTimeout);
        this.reclaimable = Objects.requireNonNull(reclaimable);
    }

    /**
     * This engine counting {@code cores} of each server free (the readied moves' there: {@link ReadiedCores}), after
     * the cores nothing holds; for a dry run, which reserves nothing.
     */
    PlacementEngine reclaiming(Function<DeviceId, Set<Integer>> cores) {
        return new PlacementEngine(servers, network, switches, random, calls.timeout(), cores);
    }

    /** The network view placement works on. */
    NetworkView network() {
        return network;
    }

    /** The same engine over another view of the network (a failure precomputed: {@link NetworkWithout}). */
    PlacementEngine over(NetworkView view) {
        return new PlacementEngine(servers, view, switches, random, calls.timeout(), reclaimable);
    }

    /**
     * This engine without one server (a lost one: its agent is not asked, so a dead agent costs no timeout).
     */
    PlacementEngine without(DeviceId lost) {
        return without(lost::equals);
    }

    /**
     * This engine without the servers {@code out} names when it draws (asked at each draw: a drained server,
     * {@link org.metron.app.store.ChainStore#isDrained}, is out from the moment it is recorded).
     */
    PlacementEngine without(java.util.function.Predicate<DeviceId> out) {
        ServerRegistry all = servers;
        return new PlacementEngine(new ServerRegistry() {
            @Override
            public java.util.Collection<MetronServer> servers() {
                List<MetronServer> in = new ArrayList<>(all.servers());
                in.removeIf(m -> out.test(m.id()));
                return in;
            }

            @Override
            public Optional<MetronServer> server(DeviceId id) {
                return out.test(id) ? Optional.empty() : all.server(id);
            }
        }, network, switches, random, calls.timeout(), reclaimable);
    }

    /**
     * Picks a server, a NIC (and egress NIC) and free cores for a chain.
     *
     * @param coresNeeded   cores to reserve
     * @param reservedCores cores already promised to other chains by placements the agent may not report yet
     * @throws MetronException IMPOSSIBLE_PLACEMENT listing why each server was rejected, or AGENT_FAILURE when
     *                         every server was rejected because its agent could not be reached
     */
    public ServerChoice chooseServer(ChainId chain, Deployment d, int coresNeeded,
                                     Function<DeviceId, Set<Integer>> reservedCores) {
        return chooseServer(chain, d, coresNeeded, reservedCores, FlowStateDemand.none());
    }

    /**
     * As {@link #chooseServer(ChainId, Deployment, int, Function)}, for a chain whose groups declare flow
     * state: a server must also have the flow memory its declared capacities reserve (its agent's
     * {@code flow_memory_free_bytes}, at {@code flow_entry_bytes} per flow).
     */
    public ServerChoice chooseServer(ChainId chain, Deployment d, int coresNeeded,
                                     Function<DeviceId, Set<Integer>> reservedCores, FlowStateDemand flowState) {
        List<MetronServer> candidates = new ArrayList<>(servers.servers());
        if (candidates.isEmpty()) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": no Metron server registered"
                    + " that takes chains (a drained server takes none)");
        }
        Map<DeviceId, String> rejected = new LinkedHashMap<>();
        int unreachable = 0;
        int queried = 0;
        while (!candidates.isEmpty()) {
            int i = random.nextInt(candidates.size());
            List<MetronServer> drawn = new ArrayList<>();
            drawn.add(candidates.get(i));
            if (candidates.size() > 1) {
                int j = random.nextInt(candidates.size() - 1);
                drawn.add(candidates.get(j >= i ? j + 1 : j));
            }
            ServerChoice best = null;
            for (MetronServer s : drawn) {
                queried++;
                Probe p = probe(s, d, coresNeeded, reservedCores.apply(s.id()), flowState, "");
                if (p.choice == null) {
                    rejected.put(s.id(), p.reason);
                    unreachable += p.unreachable ? 1 : 0;
                } else if (best == null || p.choice.load() < best.load()) {
                    best = p.choice;
                }
            }
            if (best != null) {
                return new ServerChoice(best.server(), best.nic(), best.egressNic(), best.cores(), best.tagsInUse(),
                        best.load(), queried, best.nicRules());
            }
            candidates.removeAll(drawn);
        }
        String reasons = rejected.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining("; "));
        Fault fault = unreachable == rejected.size() ? Fault.AGENT_FAILURE : Fault.IMPOSSIBLE_PLACEMENT;
        throw new MetronException(fault, "chain " + chain + " needs " + coresNeeded + " free cores"
                + (flowState.isEmpty() ? "" : ", the flow memory of its declared capacities") + " and "
                + d.nics() + " NIC(s), the ingress one reachable from " + ingress(d) + " and dispatching "
                + tagName(d.tagType()) + " tags; no server fits: " + reasons);
    }

    /**
     * Picks where the new version of a running chain goes (docs/updates.md): its current server first, counting the
     * cores the running version holds as free (both versions share them while traffic moves), else any server as
     * {@link #chooseServer} does.
     *
     * @param current     the running version's server, if it has one
     * @param reservedCores cores promised to other chains (not this one)
     */
    public ServerChoice chooseServerForUpdate(ChainId chain, Deployment d, int coresNeeded,
                                              Function<DeviceId, Set<Integer>> reservedCores, FlowStateDemand flowState,
                                              Optional<MetronServer> current) {
        String why = "";
        if (current.isPresent() && servers.server(current.get().id()).isEmpty()) {
            why = "its server " + current.get().id() + " takes nothing now (drained or no longer registered); ";
        } else if (current.isPresent()) {
            try {
                return chooseServerAt(chain, d, coresNeeded, reservedCores, flowState, current.get());
            } catch (MetronException e) {
                why = "its server " + current.get().id() + " cannot take it (" + e.getMessage() + "); ";
            }
        }
        try {
            return chooseServer(chain, d, coresNeeded, reservedCores, flowState);
        } catch (MetronException e) {
            throw new MetronException(e.fault(), why + e.getMessage(), e);
        }
    }

    /**
     * The one server {@code at} for a chain (a chain moved back to a server it was drained off): the chain's own
     * pipeline there, if any, counts as free, as for {@link #chooseServerForUpdate}.
     *
     * @throws MetronException IMPOSSIBLE_PLACEMENT saying why {@code at} cannot take it
     */
    public ServerChoice chooseServerAt(ChainId chain, Deployment d, int coresNeeded,
                                       Function<DeviceId, Set<Integer>> reservedCores, FlowStateDemand flowState,
                                       MetronServer at) {
        Probe p = probe(at, d, coresNeeded, reservedCores.apply(at.id()), flowState, chain.name());
        if (p.choice == null) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "server " + at.id() + " cannot take chain "
                    + chain + ": " + p.reason);
        }
        return new ServerChoice(p.choice.server(), p.choice.nic(), p.choice.egressNic(), p.choice.cores(),
                p.choice.tagsInUse(), p.choice.load(), 1, p.choice.nicRules());
    }

    /** One server's answer to "can you take it?". */
    private static final class Probe {
        final ServerChoice choice;
        final String reason;
        final boolean unreachable;

        Probe(ServerChoice choice, String reason, boolean unreachable) {
            this.choice = choice;
            this.reason = reason;
            this.unreachable = unreachable;
        }
    }

    /**
     * @param ownPipeline a pipeline whose cores count as free (the running version of a chain being updated; "" =
     *                    none)
     */
    private Probe probe(MetronServer s, Deployment d, int coresNeeded, Set<Integer> reserved,
                        FlowStateDemand flowState, String ownPipeline) {
        ServerResources res;
        Stats stats;
        try {
            res = calls.await(AgentCalls.started(() -> s.agent().getResources()), "resources of " + s.id());
            stats = calls.await(AgentCalls.started(() -> s.agent().getStats("")), "load of " + s.id());
        } catch (MetronException e) {
            return new Probe(null, "agent " + s.agent().target() + " unreachable: " + AgentCalls.reason(e), true);
        }
        Set<Integer> readied = reclaimable.apply(s.id());
        List<Integer> free = res.getCoresList().stream()
                .filter(c -> c.getAvailable() && (readied.contains(c.getId()) || (c.getPipelineId().isEmpty()
                        || c.getPipelineId().equals(ownPipeline)) && !reserved.contains(c.getId())))
                .map(Core::getId).sorted(java.util.Comparator.comparing((Integer k) -> readied.contains(k))
                        .thenComparing(k -> k))
                .collect(Collectors.toList());
        if (free.size() < coresNeeded) {
            return new Probe(null, free.size() + " free cores", false);
        }
        String memory = flowState.shortfall(res.getFlowMemoryFreeBytes(), res.getFlowEntryBytes());
        if (!memory.isEmpty()) {
            return new Probe(null, memory, false);
        }
        List<String> usable = new ArrayList<>();
        String nic = null;
        boolean nicRules = false;
        List<String> cannotTag = new ArrayList<>();
        for (Nic n : res.getNicsList()) {
            Optional<ConnectPoint> at = s.attachment(n.getName());
            if (!n.getLinkUp() || at.isEmpty()) {
                continue;
            }
            usable.add(n.getName());
            if (nic == null && network.path(ingress(d), at.get()).isPresent()) {
                // the ingress NIC steers the chain's group tags to its cores: it must dispatch their type
                String refusal = tagRefusal(n, d.tagType());
                if (!refusal.isEmpty()) {
                    cannotTag.add(refusal);
                    continue;
                }
                nic = n.getName();
                nicRules = n.getMaxNicRules() > 0;
            }
        }
        if (usable.size() < d.nics() || nic == null) {
            return new Probe(null, usable.size() + " usable NICs" + (nic != null ? ""
                    : cannotTag.isEmpty() ? ", none reachable from " + ingress(d)
                    : ", none of those reachable from " + ingress(d) + " can dispatch " + tagName(d.tagType())
                            + " tags: " + String.join("; ", cannotTag)), false);
        }
        String egressNic = null;
        for (String n : usable) {
            boolean other = d.nics() < 2 ? n.equals(nic) : !n.equals(nic);
            if (other && network.path(s.attachment(n).get(), egress(d)).isPresent()) {
                egressNic = n;
                break;
            }
        }
        if (egressNic == null) {
            return new Probe(null, "no NIC with a path to egress " + egress(d), false);
        }
        double load = stats.getCoresList().stream().mapToDouble(CoreStats::getLoad).average().orElse(0);
        return new Probe(new ServerChoice(s, nic, egressNic, free.subList(0, coresNeeded),
                new HashSet<>(res.getTagsInUseList()), load, 0, nicRules), "", false);
    }

    /**
     * Why NIC {@code n} cannot steer group tags of {@code type} to cores, naming it, its dispatch mode and the
     * missing capability; empty when it can.
     */
    static String tagRefusal(Nic n, TagType type) {
        NicDispatch dispatch = NicDispatch.of(n);
        if (dispatch.dispatches(tagName(type))) {
            return "";
        }
        String has = dispatch.tagTypes().isEmpty() ? "no tag types" : String.join(", ", dispatch.tagTypes())
                + " tags only";
        return "NIC " + n.getName() + " dispatches with " + dispatch.summary() + ", which steers " + has + " (no "
                + tagName(type) + " tag dispatch)";
    }

    private static String tagName(TagType type) {
        return type.name().toLowerCase(Locale.ROOT);
    }

    /**
     * Picks the offload device on the path from the ingress point to the server NIC's switch port.
     *
     * @param compile the chain compiled for a target profile (callers memoize: it is asked per candidate)
     * @throws MetronException IMPOSSIBLE_PLACEMENT when there is no path or no programmable device can hold
     *                         even the software-classification rule
     */
    public OffloadChoice chooseOffload(ChainId chain, ConnectPoint ingress, ConnectPoint attachment,
                                       Function<TargetProfile, CompiledChain> compile) {
        List<Link> path = network.path(ingress, attachment).orElseThrow(() -> new MetronException(
                Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": no path from " + ingress + " to " + attachment));
        List<DeviceId> devices = new ArrayList<>();
        devices.add(ingress.deviceId());
        path.forEach(l -> devices.add(l.dst().deviceId()));

        OffloadChoice chosen = null;
        List<DeviceId> backups = new ArrayList<>();
        List<String> backupProfiles = new ArrayList<>();
        for (boolean fallback : new boolean[]{false, true}) {
            if (fallback && chosen != null) {
                break; // backups come from the devices' own profiles: a software-only compile per submit costs
            }
            for (int pos = 0; pos < devices.size(); pos++) {
                Optional<NetworkDevice> nd = network.device(devices.get(pos));
                if (nd.isEmpty() || !nd.get().role().programmable()) {
                    continue;
                }
                int freeRules = nd.get().ruleCapacity() - switches.ruleCount(nd.get().id());
                TargetProfile profile = (fallback ? TargetProfile.NONE : profileFor(nd.get().role()))
                        .withCapacity(Math.max(0, freeRules));
                CompiledChain compiled = compile.apply(profile);
                if (RulePlanner.offloadRuleCount(compiled) > freeRules) {
                    continue;
                }
                if (chosen == null) {
                    chosen = new OffloadChoice(nd.get().id(), profile, compiled, path, pos, List.of(), List.of());
                } else if (!backups.contains(nd.get().id()) && !nd.get().id().equals(chosen.device())) {
                    backups.add(nd.get().id());
                    backupProfiles.add(profile.name());
                }
            }
        }
        if (chosen == null) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + chain + ": no programmable device "
                    + "with free rule capacity on the path " + devices + " from " + ingress + " to " + attachment);
        }
        return new OffloadChoice(chosen.device(), chosen.profile(), chosen.compiled(), path, chosen.position(),
                backups, backupProfiles);
    }

    /**
     * Looks for a device that can run the whole chain alone: the first programmable device on the
     * ingress→egress path whose profile compiles the chain to no server groups (a stateless chain the device
     * can match and rewrite completely) within its free rule capacity. Such a chain needs no server.
     */
    public Optional<OffloadChoice> chooseFullOffload(ChainId chain, ConnectPoint ingress, ConnectPoint egress,
                                                     Function<TargetProfile, CompiledChain> compile) {
        Optional<List<Link>> path = network.path(ingress, egress);
        if (path.isEmpty()) {
            return Optional.empty();
        }
        List<DeviceId> devices = new ArrayList<>();
        devices.add(ingress.deviceId());
        path.get().forEach(l -> devices.add(l.dst().deviceId()));
        for (int pos = 0; pos < devices.size(); pos++) {
            Optional<NetworkDevice> nd = network.device(devices.get(pos));
            if (nd.isEmpty() || !nd.get().role().programmable()) {
                continue;
            }
            int freeRules = nd.get().ruleCapacity() - switches.ruleCount(nd.get().id());
            TargetProfile profile = profileFor(nd.get().role()).withCapacity(Math.max(0, freeRules));
            CompiledChain compiled = compile.apply(profile);
            if (compiled.groups().isEmpty() && !compiled.offloadRules().isEmpty()
                    && compiled.offloadRules().size() <= freeRules) {
                return Optional.of(new OffloadChoice(nd.get().id(), profile, compiled, path.get(), pos, List.of(),
                        List.of()));
            }
        }
        return Optional.empty();
    }

    /** The synthesizer profile for a device role. */
    static TargetProfile profileFor(DeviceRole role) {
        switch (role) {
            case OPENFLOW_SWITCH:
                return TargetProfile.OPENFLOW13;
            case P4_TAGGER:
                return TargetProfile.P4_TAGGER;
            default:
                return TargetProfile.NONE;
        }
    }
}
