package org.metron.app.testing;

import org.metron.agent.v1.Core;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.GroupSpec;
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
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.TagType;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * An in-memory agent with agent.proto's semantics (cores owned by pipelines, ALREADY_EXISTS/NOT_FOUND,
 * all-or-nothing NIC rule batches, RESOURCE_EXHAUSTED for busy cores) for controller unit tests, where no
 * metron-agent process runs. Failures can be switched on per call kind; every call is logged in order.
 */
public final class TestAgent implements AgentClient {
    private final String target;
    private final int cores;
    private final List<Nic> nics = new ArrayList<>();
    private final Set<Integer> tagsInUse = new HashSet<>();
    private final Map<String, DeployPipelineRequest> pipelines = new LinkedHashMap<>();
    private final Map<Long, NicRule> nicRules = new LinkedHashMap<>();
    private final List<String> calls = new ArrayList<>();
    private final List<ImportStateRequest> imports = new ArrayList<>();
    /** (pipeline, group) to its flow tables. */
    private final Map<List<String>, List<StateTable>> state = new LinkedHashMap<>();
    private boolean failUpdate;
    private double load;
    private boolean unreachable;
    private boolean failDeploy;
    private boolean failNicRules;
    private int resourceQueries;
    private long flowMemoryFree;
    private int flowEntryBytes;
    private long bootId = 1;

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

    public synchronized TestAgent failNicRules(boolean v) {
        failNicRules = v;
        return this;
    }

    public synchronized TestAgent load(double v) {
        load = v;
        return this;
    }

    /** What GetResources reports of flow-state memory: free bytes and the bytes one declared flow reserves. */
    public synchronized TestAgent flowMemory(long freeBytes, int bytesPerFlow) {
        flowMemoryFree = freeBytes;
        flowEntryBytes = bytesPerFlow;
        return this;
    }

    public synchronized TestAgent tagInUse(int tag) {
        tagsInUse.add(tag);
        return this;
    }

    public synchronized Map<String, DeployPipelineRequest> pipelines() {
        return new LinkedHashMap<>(pipelines);
    }

    public synchronized Map<Long, NicRule> nicRules() {
        return new LinkedHashMap<>(nicRules);
    }

    /** ImportState requests accepted, in order. */
    public synchronized List<ImportStateRequest> imports() {
        return List.copyOf(imports);
    }

    public synchronized List<String> calls() {
        return new ArrayList<>(calls);
    }

    /** How many times placement asked this server for resources. */
    public synchronized int resourceQueries() {
        return resourceQueries;
    }

    private <T> CompletableFuture<T> fail(String rpc, AgentException.Code code, String detail) {
        return CompletableFuture.failedFuture(new AgentException(target, rpc, code, detail, null));
    }

    private boolean down(String rpc) {
        calls.add(rpc);
        return unreachable;
    }

    @Override
    public String target() {
        return target;
    }

    @Override
    public synchronized CompletableFuture<ServerResources> getResources() {
        resourceQueries++;
        if (down("GetResources")) {
            return fail("GetResources", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        ServerResources.Builder b = ServerResources.newBuilder().setHostname(target).addAllNics(nics)
                .addAllTagsInUse(tagsInUse).setFlowMemoryFreeBytes(flowMemoryFree).setFlowEntryBytes(flowEntryBytes);
        Map<Integer, String> owner = new LinkedHashMap<>();
        pipelines.values().forEach(p -> p.getGroupsList().forEach(g -> owner.put(g.getCore(), p.getPipelineId())));
        for (int c = 0; c < cores; c++) {
            b.addCores(Core.newBuilder().setId(c).setAvailable(true).setPipelineId(owner.getOrDefault(c, "")));
        }
        return CompletableFuture.completedFuture(b.build());
    }

    @Override
    public synchronized CompletableFuture<HealthReply> health() {
        if (down("Health")) {
            return fail("Health", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        return CompletableFuture.completedFuture(HealthReply.newBuilder().setServing(true).setBootId(bootId).build());
    }

    @Override
    public synchronized CompletableFuture<PipelineStatus> deployPipeline(DeployPipelineRequest request) {
        if (down("DeployPipeline")) {
            return fail("DeployPipeline", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        if (failDeploy) {
            return fail("DeployPipeline", AgentException.Code.INVALID_ARGUMENT, "group g0: line 1:1: unknown element");
        }
        if (pipelines.containsKey(request.getPipelineId())) {
            return fail("DeployPipeline", AgentException.Code.ALREADY_EXISTS, request.getPipelineId());
        }
        Set<Integer> busy = new HashSet<>();
        pipelines.values().forEach(p -> p.getGroupsList().forEach(g -> busy.add(g.getCore())));
        for (GroupSpec g : request.getGroupsList()) {
            if (g.getCore() >= cores || busy.contains(g.getCore())) {
                return fail("DeployPipeline", AgentException.Code.RESOURCE_EXHAUSTED, "core " + g.getCore() + " busy");
            }
        }
        pipelines.put(request.getPipelineId(), request);
        PipelineStatus.Builder s = PipelineStatus.newBuilder().setPipelineId(request.getPipelineId())
                .setState(PipelineState.PIPELINE_RUNNING).setGeneration(1);
        request.getGroupsList().forEach(g -> s.addGroups(GroupStatus.newBuilder().setGroupId(g.getGroupId())
                .setTag(g.getTag()).setCore(g.getCore()).addAllClassIds(g.getClassIdsList())));
        return CompletableFuture.completedFuture(s.build());
    }

    /**
     * The group set becomes the request's; groups kept keep their flow state, groups gone lose it, a set egress
     * replaces the pipeline's.
     */
    @Override
    public synchronized CompletableFuture<PipelineStatus> updatePipeline(UpdatePipelineRequest request) {
        if (down("UpdatePipeline")) {
            return fail("UpdatePipeline", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        if (failUpdate) {
            return fail("UpdatePipeline", AgentException.Code.RESOURCE_EXHAUSTED, "group g0~v1: no memory");
        }
        DeployPipelineRequest cur = pipelines.get(request.getPipelineId());
        if (cur == null) {
            return fail("UpdatePipeline", AgentException.Code.NOT_FOUND, request.getPipelineId());
        }
        DeployPipelineRequest.Builder next = cur.toBuilder().clearGroups().addAllGroups(request.getGroupsList());
        if (request.getEgressCount() > 0) {
            next.clearEgress().addAllEgress(request.getEgressList());
        }
        Set<String> kept = new HashSet<>();
        request.getGroupsList().forEach(g -> kept.add(g.getGroupId()));
        state.keySet().removeIf(k -> k.get(0).equals(request.getPipelineId()) && !kept.contains(k.get(1)));
        pipelines.put(request.getPipelineId(), next.build());
        PipelineStatus.Builder s = PipelineStatus.newBuilder().setPipelineId(request.getPipelineId())
                .setState(PipelineState.PIPELINE_RUNNING).setGeneration(2);
        return CompletableFuture.completedFuture(s.build());
    }

    /** Flow state of a group, as ExportState answers it. */
    public synchronized TestAgent state(String pipeline, String group, List<StateTable> tables) {
        state.put(List.of(pipeline, group), new ArrayList<>(tables));
        return this;
    }

    public synchronized List<StateTable> state(String pipeline, String group) {
        return new ArrayList<>(state.getOrDefault(List.of(pipeline, group), List.of()));
    }

    public synchronized TestAgent failUpdate(boolean v) {
        failUpdate = v;
        return this;
    }

    @Override
    public synchronized CompletableFuture<Void> removePipeline(String pipelineId) {
        if (down("RemovePipeline")) {
            return fail("RemovePipeline", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        if (pipelines.remove(pipelineId) == null) {
            return fail("RemovePipeline", AgentException.Code.NOT_FOUND, pipelineId);
        }
        state.keySet().removeIf(k -> k.get(0).equals(pipelineId));
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized CompletableFuture<ListPipelinesReply> listPipelines() {
        if (down("ListPipelines")) {
            return fail("ListPipelines", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        ListPipelinesReply.Builder b = ListPipelinesReply.newBuilder();
        pipelines.keySet().forEach(id -> b.addPipelines(PipelineStatus.newBuilder().setPipelineId(id)
                .setState(PipelineState.PIPELINE_RUNNING)));
        return CompletableFuture.completedFuture(b.build());
    }

    @Override
    public synchronized CompletableFuture<NicRuleReply> installNicRules(NicRuleBatch batch) {
        if (down("InstallNicRules")) {
            return fail("InstallNicRules", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        if (failNicRules) {
            return fail("InstallNicRules", AgentException.Code.RESOURCE_EXHAUSTED, "NIC rule table full");
        }
        for (NicRule r : batch.getRulesList()) {
            if (nicRules.containsKey(r.getId())) {
                return fail("InstallNicRules", AgentException.Code.ALREADY_EXISTS, "rule " + r.getId());
            }
        }
        batch.getRulesList().forEach(r -> nicRules.put(r.getId(), r));
        return CompletableFuture.completedFuture(NicRuleReply.newBuilder().setApplied(batch.getRulesCount()).build());
    }

    @Override
    public synchronized CompletableFuture<NicRuleReply> removeNicRules(Collection<Long> ids) {
        if (down("RemoveNicRules")) {
            return fail("RemoveNicRules", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        int i = 0;
        for (Long id : ids) {
            if (!nicRules.containsKey(id)) { // the agent removes nothing when one id is unknown
                return fail("RemoveNicRules", AgentException.Code.NOT_FOUND, "ids[" + i + "]: " + id
                        + " is not an installed NIC rule");
            }
            i++;
        }
        ids.forEach(nicRules::remove);
        return CompletableFuture.completedFuture(NicRuleReply.newBuilder().setApplied(ids.size()).build());
    }

    @Override
    public synchronized CompletableFuture<NicRuleList> listNicRules(String nic) {
        if (down("ListNicRules")) {
            return fail("ListNicRules", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        return CompletableFuture.completedFuture(NicRuleList.newBuilder().addAllRules(nicRules.values()
                .stream().filter(r -> nic.isEmpty() || r.getNic().equals(nic)).collect(Collectors.toList())).build());
    }

    @Override
    public synchronized CompletableFuture<Stats> getStats(String pipelineId) {
        if (down("GetStats")) {
            return fail("GetStats", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        Stats.Builder s = Stats.newBuilder();
        for (int c = 0; c < cores; c++) {
            s.addCores(CoreStats.newBuilder().setCore(c).setLoad(load));
        }
        return CompletableFuture.completedFuture(s.build());
    }

    @Override
    public AutoCloseable streamLoad(int intervalMs, double alertLoad, Consumer<Stats> onReport,
                                    Consumer<Throwable> onError) {
        return () -> { };
    }

    @Override
    public synchronized CompletableFuture<StateSnapshot> exportState(String pipelineId, String groupId) {
        if (down("ExportState")) {
            return fail("ExportState", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        return CompletableFuture.completedFuture(StateSnapshot.newBuilder().setPipelineId(pipelineId)
                .setGroupId(groupId).addAllTables(state(pipelineId, groupId)).build());
    }

    /** Replaces (or, merging, adds to) the target group's tables of the same elements; a flow already there stays. */
    @Override
    public synchronized CompletableFuture<ImportStateReply> importState(ImportStateRequest request) {
        if (down("ImportState")) {
            return fail("ImportState", AgentException.Code.UNAVAILABLE, "connection refused");
        }
        StateSnapshot snap = request.getSnapshot();
        List<String> key = List.of(snap.getPipelineId(), request.getTargetGroupId());
        DeployPipelineRequest p = pipelines.get(snap.getPipelineId());
        if (p == null || p.getGroupsList().stream().noneMatch(g -> g.getGroupId().equals(request.getTargetGroupId()))) {
            return fail("ImportState", AgentException.Code.NOT_FOUND, "group " + key);
        }
        if (request.getFollowSource()) {  // the agent's rule: a group follows another one of its pipeline and core
            Set<Integer> cores = new HashSet<>();
            long found = p.getGroupsList().stream().filter(g -> g.getGroupId().equals(snap.getGroupId())
                    || g.getGroupId().equals(request.getTargetGroupId())).peek(g -> cores.add(g.getCore())).count();
            if (found != 2 || cores.size() != 1) {
                return fail("ImportState", AgentException.Code.FAILED_PRECONDITION, "follow_source: " + snap.getGroupId()
                        + " is no other group of " + key + " on its core");
            }
        }
        imports.add(request);
        List<StateTable> tables = state.computeIfAbsent(key, k -> new ArrayList<>());
        long n = 0;
        for (StateTable t : snap.getTablesList()) {
            int at = -1;
            for (int i = 0; i < tables.size(); i++) {
                at = tables.get(i).getElement().equals(t.getElement()) ? i : at;
            }
            StateTable.Builder b = at < 0 || !request.getMerge() ? StateTable.newBuilder(t).clearEntries()
                    : tables.get(at).toBuilder();
            Set<Object> have = new HashSet<>();
            b.getEntriesList().forEach(e -> have.add(e.getKey()));
            for (org.metron.agent.v1.FlowEntry e : t.getEntriesList()) {
                if (have.add(e.getKey())) {
                    b.addEntries(e);
                    n++;
                }
            }
            if (at < 0) {
                tables.add(b.build());
            } else {
                tables.set(at, b.build());
            }
        }
        return CompletableFuture.completedFuture(ImportStateReply.newBuilder().setEntries(n).build());
    }

    @Override
    public void close() {
    }
}
