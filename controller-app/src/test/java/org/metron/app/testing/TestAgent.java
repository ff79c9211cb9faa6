package org.metron.app.testing;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.ClassStats;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.FlowStateStats;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.ImportStateReply;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.ListPipelinesReply;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.NicRuleList;
import org.metron.agent.v1.NicRuleReply;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.RemovePipelineRequest;
import org.metron.agent.v1.PortStats;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.StepTime;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.TagType;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.app.testing.AgentRefusals.Refused;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * An in-memory agent for controller unit tests, where no metron-agent process runs, answering as the real agent
 * does (AgentContract holds the two to the same cases): worker cores 0..cores-1 that several pipelines may share,
 * requests refused with the agent's codes (AgentRefusals), tags unique per ingress NIC, all-or-nothing NIC rule
 * batches on NICs with a rule table, flow tables per stateful element (FakeFlowTables), a load stream.
 * Failures can be switched on per call kind; every call is logged in order.
 */
public final class TestAgent implements AgentClient {
    private final String target;
    private final int cores;
    private final List<Nic> nics = new ArrayList<>();
    private final Set<Integer> tagsInUse = new HashSet<>();
    private final Map<String, DeployPipelineRequest> pipelines = new TreeMap<>();
    private final Map<String, Long> generations = new TreeMap<>();
    /** The newest owner token seen per pipeline id (agent.proto, owner_token): kept after a removal. */
    private final Map<String, Long> ownerTokens = new TreeMap<>();
    private final Map<Long, NicRule> nicRules = new TreeMap<>(Long::compareUnsigned);
    private final List<String> calls = new ArrayList<>();
    private final List<ImportStateRequest> imports = new ArrayList<>();
    private final FakeFlowTables state = new FakeFlowTables();
    private boolean failUpdate;
    private double load;
    private boolean unreachable;
    private boolean failDeploy;
    private boolean failNicRules;
    private int resourceQueries;
    private long flowMemoryFree;
    private int flowEntryBytes;
    private long bootId = 1;
    /** Whether the agent runs on hugepages (a RING black box needs them; the contract's real agent has none). */
    private boolean hugepages = true;
    /** Black-box stats a test set, by "pipeline/nf" (else RUNNING, no traffic: FakeBlackBoxes.stats). */
    private final Map<String, BlackBoxStats> blackBoxes = new HashMap<>();

    public TestAgent(String target, int cores, double load) {
        this.target = target;
        this.cores = cores;
        this.load = load;
    }

    /** A NIC dispatching as the real agent's kernel fanout does: MAC and VLAN tags. */
    public TestAgent nic(String name, boolean linkUp, int maxNicRules) {
        return nic(name, linkUp, maxNicRules, DispatchMode.DISPATCH_FANOUT_CBPF, TagType.TAG_MAC, TagType.TAG_VLAN);
    }

    /** A NIC in dispatch mode {@code mode}, steering the tag types the real agent reports for it. */
    public TestAgent nic(String name, boolean linkUp, int maxNicRules, DispatchMode mode, TagType... tagTypes) {
        nics.add(Nic.newBuilder().setName(name).setMac("00:00:00:00:00:0" + nics.size()).setLinkUp(linkUp)
                .setMaxNicRules(maxNicRules).setRxQueues(cores).setTxQueues(cores).setActiveMode(mode)
                .addDispatchModes(mode).addAllTagTypes(List.of(tagTypes)).build());
        return this;
    }

    /** The agent process restarted: every pipeline and NIC rule is gone and Health reports a new boot id. */
    public synchronized TestAgent restart() {
        pipelines.clear();
        generations.clear();
        ownerTokens.clear();
        nicRules.clear();
        state.clear();
        bootId++;
        return this;
    }

    public synchronized TestAgent unreachable(boolean v) {
        unreachable = v;
        return this;
    }

    public synchronized TestAgent failDeploy(boolean v) {
        failDeploy = v;
        return this;
    }

    public synchronized TestAgent failUpdate(boolean v) {
        failUpdate = v;
        return this;
    }

    public synchronized TestAgent failNicRules(boolean v) {
        failNicRules = v;
        return this;
    }

    /** Whether the agent runs on hugepages as the DPDK primary (default true): RING black boxes need it. */
    public synchronized TestAgent hugepages(boolean v) {
        hugepages = v;
        return this;
    }

    /**
     * What GetStats reports for black-box NF {@code nf} of pipeline {@code pipeline} from now on (its element name
     * is taken from the group config): as the real agent reports a box that died, restarted or FAILED.
     */
    public synchronized TestAgent blackBox(String pipeline, BlackBoxStats stats) {
        blackBoxes.put(pipeline + "/" + stats.getNf(), stats);
        return this;
    }

    public synchronized TestAgent load(double v) {
        load = v;
        return this;
    }

    /**
     * Flow-state memory: free bytes before any table is reserved, and the bytes one declared flow reserves (a
     * deploy whose CAPACITY does not fit is refused; GetResources reports what the running groups left).
     */
    public synchronized TestAgent flowMemory(long freeBytes, int bytesPerFlow) {
        flowMemoryFree = freeBytes;
        flowEntryBytes = bytesPerFlow;
        return this;
    }

    /** A tag some other party dispatches on this server (GetResources lists it). */
    public synchronized TestAgent tagInUse(int tag) {
        tagsInUse.add(tag);
        return this;
    }

    /** Flow state of a group, as ExportState answers it (next to empty tables of its other stateful elements). */
    public synchronized TestAgent state(String pipeline, String group, List<StateTable> tables) {
        state.set(pipeline, group, tables);
        return this;
    }

    /** The tables a group holds (empty ones of its stateful elements left out). */
    public synchronized List<StateTable> state(String pipeline, String group) {
        return state.held(pipeline, group);
    }

    public synchronized Map<String, DeployPipelineRequest> pipelines() {
        return new LinkedHashMap<>(pipelines);
    }

    /** The NIC rules as the agent holds them (an eth_dst's mask made explicit, an address's IP version set). */
    public synchronized Map<Long, NicRule> nicRules() {
        return new LinkedHashMap<>(nicRules);
    }

    public synchronized List<String> calls() {
        return new ArrayList<>(calls);
    }

    /** ImportState requests accepted, in order. */
    public synchronized List<ImportStateRequest> imports() {
        return List.copyOf(imports);
    }

    /** How many times placement asked this server for resources. */
    public synchronized int resourceQueries() {
        return resourceQueries;
    }

    private List<Integer> workers() {
        return IntStream.range(0, cores).boxed().collect(Collectors.toList());
    }

    private Set<String> nicNames() {
        return nics.stream().map(Nic::getName).collect(Collectors.toSet());
    }

    /**
     * One call: logged, UNAVAILABLE while unreachable, else {@code body}'s answer or refusal (a refusal changes
     * nothing: bodies check everything before they change anything).
     */
    private synchronized <T> CompletableFuture<T> call(String rpc, Supplier<T> body) {
        calls.add(rpc);
        if (unreachable) {
            return CompletableFuture.failedFuture(new AgentException(target, rpc, Code.UNAVAILABLE,
                    "connection refused", null));
        }
        try {
            return CompletableFuture.completedFuture(body.get());
        } catch (Refused r) {
            return CompletableFuture.failedFuture(new AgentException(target, rpc, r.code, r.getMessage(), null));
        }
    }

    @Override
    public String target() {
        return target;
    }

    @Override
    public CompletableFuture<ServerResources> getResources() {
        synchronized (this) {
            resourceQueries++;
        }
        return call("GetResources", () -> {
            Set<Integer> tags = new TreeSet<>(tagsInUse);
            Map<Integer, String> owner = new TreeMap<>();
            pipelines.values().forEach(p -> p.getGroupsList().forEach(g -> {
                tags.add(g.getTag().getValue());
                owner.putIfAbsent(g.getCore(), p.getPipelineId());
            }));
            ServerResources.Builder b = ServerResources.newBuilder().setHostname(target).addAllNics(nics)
                    .addAllTagsInUse(tags).setFlowMemoryFreeBytes(flowMemoryFree - reserved(pipelines.values()))
                    .setFlowEntryBytes(flowEntryBytes);
            workers().forEach(c -> b.addCores(Core.newBuilder().setId(c).setAvailable(true)
                    .setPipelineId(owner.getOrDefault(c, ""))));
            return b.build();
        });
    }

    @Override
    public CompletableFuture<HealthReply> health() {
        return call("Health", () -> HealthReply.newBuilder().setServing(true).setBootId(bootId).build());
    }

    /** The steps an agent's UpdatePipeline reports (engine_backend.cc's StepClock laps), timed at 0 here. */
    private static final List<String> UPDATE_STEPS = List.of("wait", "build", "copy", "take-over", "adopt+steer",
            "retire");

    /**
     * The agent's fencing rule (control/owner_tokens.h): a token older than the newest seen for the pipeline is
     * ABORTED naming both; a newer one becomes the newest; 0 is unfenced.
     */
    private void admit(String rpc, String pipeline, long token) {
        if (token == 0) {
            return;
        }
        long held = ownerTokens.getOrDefault(pipeline, 0L);
        if (Long.compareUnsigned(token, held) < 0) {
            throw new Refused(Code.ABORTED, rpc + " of pipeline " + pipeline + " refused: owner token " + token
                    + " is older than " + held + ", the newest this agent has seen for it (another controller "
                    + "instance owns the chain)");
        }
        ownerTokens.put(pipeline, token);
    }

    private PipelineStatus status(String id) {
        PipelineStatus.Builder s = PipelineStatus.newBuilder().setPipelineId(id)
                .setState(PipelineState.PIPELINE_RUNNING).setGeneration(generations.get(id))
                .setOwnerToken(ownerTokens.getOrDefault(id, 0L));
        pipelines.get(id).getGroupsList().forEach(g -> s.addGroups(GroupStatus.newBuilder()
                .setGroupId(g.getGroupId()).setTag(g.getTag()).setCore(g.getCore())
                .addAllClassIds(g.getClassIdsList()).setPortShare(g.getPortShare())));
        return s.build();
    }

    /** A tag of {@code groups} another pipeline entering at the same NIC already has: ALREADY_EXISTS. */
    private void checkTagsFree(String id, String ingress, List<GroupSpec> groups) {
        for (DeployPipelineRequest other : pipelines.values()) {
            if (other.getPipelineId().equals(id) || !other.getIngressNic().equals(ingress)) {
                continue;
            }
            for (GroupSpec g : groups) {
                if (other.getGroupsList().stream().anyMatch(o -> o.getTag().equals(g.getTag()))) {
                    throw new Refused(Code.ALREADY_EXISTS, g.getGroupId() + ".tag.value: " + g.getTag().getValue()
                            + " already dispatched to pipeline '" + other.getPipelineId() + "'");
                }
            }
        }
    }

    /** Flow memory the declared capacities of these pipelines' groups reserve. */
    private long reserved(Collection<DeployPipelineRequest> ps) {
        return ps.stream().flatMap(p -> p.getGroupsList().stream())
                .mapToLong(g -> AgentRefusals.declaredFlows(g.getClickConfig()) * flowEntryBytes).sum();
    }

    /** New groups whose declared tables do not fit in the flow memory left: RESOURCE_EXHAUSTED. */
    private void checkFlowMemory(DeployPipelineRequest adding) {
        long want = reserved(List.of(adding));
        long free = flowMemoryFree - reserved(pipelines.values());
        if (want > free) {
            throw new Refused(Code.RESOURCE_EXHAUSTED, "click_config: declared capacities need " + want
                    + " bytes of flow memory, " + free + " available");
        }
    }

    @Override
    public CompletableFuture<PipelineStatus> deployPipeline(DeployPipelineRequest request) {
        return call("DeployPipeline", () -> {
            if (failDeploy) {
                throw new Refused(Code.INVALID_ARGUMENT, "group g0: line 1:1: unknown element");
            }
            AgentRefusals.checkDeploy(request, nicNames(), workers());
            admit("DeployPipeline", request.getPipelineId(), request.getOwnerToken());
            if (pipelines.containsKey(request.getPipelineId())) {
                throw new Refused(Code.ALREADY_EXISTS, "pipeline_id: '" + request.getPipelineId()
                        + "' already deployed");
            }
            checkTagsFree(request.getPipelineId(), request.getIngressNic(), request.getGroupsList());
            checkFlowMemory(request);
            FakeBlackBoxes.start(request.getGroupsList(), hugepages);
            pipelines.put(request.getPipelineId(), request);
            generations.put(request.getPipelineId(), 1L);
            return status(request.getPipelineId());
        });
    }

    /**
     * The group set becomes the request's (flow tables as {@link FakeFlowTables#update} says); a set egress
     * replaces the pipeline's.
     */
    @Override
    public CompletableFuture<PipelineStatus> updatePipeline(UpdatePipelineRequest request) {
        return call("UpdatePipeline", () -> {
            if (failUpdate) {
                throw new Refused(Code.RESOURCE_EXHAUSTED, "group g0~v1: no memory");
            }
            String id = request.getPipelineId();
            admit("UpdatePipeline", id, request.getOwnerToken());
            DeployPipelineRequest cur = pipelines.get(id);
            if (cur == null) {
                throw new Refused(Code.NOT_FOUND, "pipeline_id: no pipeline '" + id + "'");
            }
            AgentRefusals.checkUpdate(request.getGroupsList(), request.getEgressList(), nicNames(), workers(),
                    cur.getGroupsList());
            checkTagsFree(id, cur.getIngressNic(), request.getGroupsList());
            List<GroupSpec> built = request.getGroupsList().stream()
                    .filter(g -> g.getStateFromCount() > 0 || cur.getGroupsList().stream()
                            .noneMatch(o -> o.getGroupId().equals(g.getGroupId()) && FakeFlowTables.sameRuntime(o, g)))
                    .collect(Collectors.toList());
            // new groups are built while the old ones still run
            checkFlowMemory(DeployPipelineRequest.newBuilder().addAllGroups(built).build());
            FakeBlackBoxes.start(built, hugepages);
            DeployPipelineRequest.Builder next = cur.toBuilder().clearGroups().addAllGroups(request.getGroupsList());
            if (request.getEgressCount() > 0) {
                next.clearEgress().addAllEgress(request.getEgressList());
            }
            state.update(id, cur.getGroupsList(), request.getGroupsList());
            pipelines.put(id, next.build());
            generations.merge(id, 1L, Long::sum);
            PipelineStatus.Builder s = status(id).toBuilder();
            UPDATE_STEPS.forEach(step -> s.addSteps(StepTime.newBuilder().setName(step)));
            return s.build();
        });
    }

    @Override
    public CompletableFuture<Void> removePipeline(RemovePipelineRequest request) {
        String pipelineId = request.getPipelineId();
        return call("RemovePipeline", () -> {
            if (pipelineId.isEmpty()) {
                throw new Refused(Code.INVALID_ARGUMENT, "pipeline_id: empty");
            }
            admit("RemovePipeline", pipelineId, request.getOwnerToken());
            if (pipelines.remove(pipelineId) == null) {
                throw new Refused(Code.NOT_FOUND, "pipeline_id: no pipeline '" + pipelineId + "'");
            }
            generations.remove(pipelineId);
            state.removePipeline(pipelineId);
            return null;
        });
    }

    @Override
    public CompletableFuture<ListPipelinesReply> listPipelines() {
        return call("ListPipelines", () -> ListPipelinesReply.newBuilder()
                .addAllPipelines(pipelines.keySet().stream().map(this::status).collect(Collectors.toList())).build());
    }

    private Set<String> ruleTables() {
        return nics.stream().filter(n -> n.getMaxNicRules() > 0).map(Nic::getName).collect(Collectors.toSet());
    }

    @Override
    public CompletableFuture<NicRuleReply> installNicRules(NicRuleBatch batch) {
        return call("InstallNicRules", () -> {
            if (failNicRules) {
                throw new Refused(Code.RESOURCE_EXHAUSTED, "NIC rule table full");
            }
            if (batch.getRulesCount() == 0) {
                throw new Refused(Code.INVALID_ARGUMENT, "rules: empty batch");
            }
            Map<Long, NicRule> next = new TreeMap<>(Long::compareUnsigned);
            next.putAll(nicRules);
            for (int i = 0; i < batch.getRulesCount(); i++) {
                NicRule r = AgentRefusals.nicRule(batch.getRules(i), "rules[" + i + "]", ruleTables(), workers());
                if (next.putIfAbsent(r.getId(), r) != null) {
                    throw new Refused(Code.ALREADY_EXISTS, "rules[" + i + "].id: " + r.getId() + " is already "
                            + (nicRules.containsKey(r.getId()) ? "installed" : "in this batch"));
                }
            }
            for (Nic n : nics) {
                long held = next.values().stream().filter(r -> r.getNic().equals(n.getName())).count();
                if (held > n.getMaxNicRules()) {
                    throw new Refused(Code.RESOURCE_EXHAUSTED, "NIC " + n.getName() + ": " + held
                            + " rules requested, its table holds " + n.getMaxNicRules());
                }
            }
            nicRules.clear();
            nicRules.putAll(next);
            return NicRuleReply.newBuilder().setApplied(batch.getRulesCount()).build();
        });
    }

    @Override
    public CompletableFuture<NicRuleReply> removeNicRules(Collection<Long> ids) {
        return call("RemoveNicRules", () -> {
            if (ids.isEmpty()) {
                throw new Refused(Code.INVALID_ARGUMENT, "ids: empty");
            }
            if (new HashSet<>(ids).size() < ids.size()) {
                throw new Refused(Code.INVALID_ARGUMENT, "ids: an id is listed twice");
            }
            int i = 0;
            for (Long id : ids) { // the agent removes nothing when one id is unknown
                if (!nicRules.containsKey(id)) {
                    throw new Refused(Code.NOT_FOUND, "ids[" + i + "]: " + id + " is not an installed NIC rule");
                }
                i++;
            }
            ids.forEach(nicRules::remove);
            return NicRuleReply.newBuilder().setApplied(ids.size()).build();
        });
    }

    /** Rules of one NIC or all, ordered as the agent lists them: by NIC, then priority, then id. */
    @Override
    public CompletableFuture<NicRuleList> listNicRules(String nic) {
        return call("ListNicRules", () -> {
            if (!nic.isEmpty() && !ruleTables().contains(nic)) {
                throw new Refused(Code.NOT_FOUND, "nic: \"" + nic + "\" is not a NIC with a rule table");
            }
            return NicRuleList.newBuilder().addAllRules(nicRules.values().stream()
                    .filter(r -> nic.isEmpty() || r.getNic().equals(nic))
                    .sorted(Comparator.comparing(NicRule::getNic).thenComparingInt(NicRule::getPriority))
                    .collect(Collectors.toList())).build();
        });
    }

    @Override
    public CompletableFuture<Stats> getStats(String pipelineId) {
        return call("GetStats", () -> stats(pipelineId));
    }

    /** Every worker core at the configured load, the groups of one pipeline ("" = all) with no traffic yet. */
    private synchronized Stats stats(String pipelineId) {
        if (!pipelineId.isEmpty() && !pipelines.containsKey(pipelineId)) {
            throw new Refused(Code.NOT_FOUND, "pipeline_id: no pipeline '" + pipelineId + "'");
        }
        Stats.Builder s = Stats.newBuilder().setTimestampNs(System.nanoTime());
        workers().forEach(c -> s.addCores(CoreStats.newBuilder().setCore(c).setLoad(load)));
        for (DeployPipelineRequest p : pipelines.values()) {
            if (!pipelineId.isEmpty() && !pipelineId.equals(p.getPipelineId())) {
                continue;
            }
            for (GroupSpec g : p.getGroupsList()) {
                GroupStats.Builder gs = GroupStats.newBuilder().setPipelineId(p.getPipelineId())
                        .setGroupId(g.getGroupId()).setCore(g.getCore());
                g.getClassIdsList().forEach(c -> gs.addClasses(ClassStats.newBuilder().setClassId(c)));
                for (StateTable t : state.get(p.getPipelineId(), g)) {
                    gs.addFlowState(FlowStateStats.newBuilder().setElement(t.getElement()).setKind(t.getKind())
                            .setFlows(t.getEntriesCount()));
                }
                gs.addAllBlackBoxes(FakeBlackBoxes.stats(p.getPipelineId(), g, blackBoxes));
                s.addGroups(gs);
            }
        }
        nics.forEach(n -> s.addPorts(PortStats.newBuilder().setNic(n.getName())));
        return s.build();
    }

    /**
     * Reports as GetStats("") every interval, as the real agent streams them; an interval outside the agent's
     * 10 ms..1 h fails the stream with INVALID_ARGUMENT; no report goes out while the agent is unreachable.
     */
    @Override
    public AutoCloseable streamLoad(int intervalMs, double alertLoad, Consumer<Stats> onReport,
                                    Consumer<Throwable> onError) {
        if (intervalMs < 0 || !(alertLoad >= 0 && alertLoad <= 1)) { // refused before sending, as GrpcAgentClient
            throw new IllegalArgumentException("agent " + target + ": StreamLoad interval " + intervalMs
                    + " ms, alert load " + alertLoad);
        }
        return FakeLoadStream.start(intervalMs, () -> {
            synchronized (this) {
                if (unreachable) {
                    throw new AgentException(target, "StreamLoad", Code.UNAVAILABLE, "connection refused", null);
                }
                return stats("");
            }
        }, onReport, e -> onError.accept(e instanceof Refused
                ? new AgentException(target, "StreamLoad", ((Refused) e).code, e.getMessage(), null) : e));
    }

    private GroupSpec group(String pipeline, String group, String field) {
        DeployPipelineRequest p = pipelines.get(pipeline);
        if (p == null) {
            throw new Refused(Code.NOT_FOUND, field.replace("group_id", "pipeline_id") + ": no pipeline '"
                    + pipeline + "'");
        }
        Optional<GroupSpec> g = p.getGroupsList().stream().filter(s -> s.getGroupId().equals(group)).findFirst();
        return g.orElseThrow(() -> new Refused(Code.NOT_FOUND, field + ": no group '" + group + "' in pipeline '"
                + pipeline + "'"));
    }

    @Override
    public CompletableFuture<StateSnapshot> exportState(String pipelineId, String groupId) {
        return call("ExportState", () -> {
            if (pipelineId.isEmpty() || groupId.isEmpty()) {
                throw new Refused(Code.INVALID_ARGUMENT, "pipeline_id/group_id: empty");
            }
            GroupSpec g = group(pipelineId, groupId, "group_id");
            return StateSnapshot.newBuilder().setPipelineId(pipelineId).setGroupId(groupId)
                    .addAllTables(state.get(pipelineId, g)).build();
        });
    }

    @Override
    public CompletableFuture<ImportStateReply> importState(ImportStateRequest request) {
        return call("ImportState", () -> {
            AgentRefusals.checkImport(request);
            admit("ImportState", request.getSnapshot().getPipelineId(), request.getOwnerToken());
            StateSnapshot snap = request.getSnapshot();
            String target = request.getTargetGroupId().isEmpty() ? snap.getGroupId() : request.getTargetGroupId();
            GroupSpec g = group(snap.getPipelineId(), target, "target_group_id");
            if (request.getFollowSource()) { // the agent's rule: a group follows another one of its pipeline and core
                GroupSpec src = pipelines.get(snap.getPipelineId()).getGroupsList().stream()
                        .filter(x -> x.getGroupId().equals(snap.getGroupId())).findFirst().orElse(null);
                if (src == null || src.getGroupId().equals(g.getGroupId()) || src.getCore() != g.getCore()) {
                    throw new Refused(Code.FAILED_PRECONDITION, "follow_source: " + snap.getGroupId()
                            + " is no other group of pipeline " + snap.getPipelineId() + " on the core of " + target);
                }
            }
            imports.add(request);
            long n = state.importInto(snap.getPipelineId(), g, snap.getTablesList(), request.getMerge());
            return ImportStateReply.newBuilder().setEntries(n).build();
        });
    }

    @Override
    public void close() {
    }
}
