package org.metron.app.testing;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.ImportStateReply;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.ListPipelinesReply;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.NicRuleIds;
import org.metron.agent.v1.NicRuleList;
import org.metron.agent.v1.NicRuleReply;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.RemovePipelineRequest;
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
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * An in-memory agent for controller unit tests, where no metron-agent process runs, answering as the real agent
 * does (AgentContract holds the two to the same cases): worker cores 0..cores-1 that several pipelines may share,
 * requests refused with the agent's codes (AgentRefusals), tags unique per ingress NIC, all-or-nothing NIC rule
 * batches on NICs with a rule table, flow tables per stateful element (FakeFlowTables), a load stream.
 * Failures can be switched on per call kind; every call is logged in order.
 */
public final class TestAgent implements AgentClient {
    private final String target;
    /** What the agent holds and checks against: its pipelines, NIC rules, flows, resources. */
    private final AgentModel model;
    private final List<String> calls = new ArrayList<>();
    private final List<ImportStateRequest> imports = new ArrayList<>();
    private boolean failUpdate;
    private boolean unreachable;
    private boolean failDeploy;
    private boolean failNicRules;
    private int resourceQueries;

    public TestAgent(String target, int cores, double load) {
        this.target = target;
        this.model = new AgentModel(cores, load);
    }

    /** A NIC dispatching as the real agent's kernel fanout does: MAC and VLAN tags. */
    public TestAgent nic(String name, boolean linkUp, int maxNicRules) {
        return nic(name, linkUp, maxNicRules, DispatchMode.DISPATCH_FANOUT_CBPF, TagType.TAG_MAC, TagType.TAG_VLAN);
    }

    /** A NIC in dispatch mode {@code mode}, steering the tag types the real agent reports for it. */
    public TestAgent nic(String name, boolean linkUp, int maxNicRules, DispatchMode mode, TagType... tagTypes) {
        model.nics.add(Nic.newBuilder().setName(name).setMac("00:00:00:00:00:0" + model.nics.size())
                .setLinkUp(linkUp).setMaxNicRules(maxNicRules).setRxQueues(model.cores).setTxQueues(model.cores)
                .setActiveMode(mode).addDispatchModes(mode).addAllTagTypes(List.of(tagTypes)).build());
        return this;
    }

    /** The agent process restarted: every pipeline and NIC rule is gone and Health reports a new boot id. */
    public synchronized TestAgent restart() {
        model.restart();
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
        model.hugepages = v;
        return this;
    }

    /**
     * What GetStats reports for black-box NF {@code nf} of pipeline {@code pipeline} from now on (its element name
     * is taken from the group config): as the real agent reports a box that died, restarted or FAILED.
     */
    public synchronized TestAgent blackBox(String pipeline, BlackBoxStats stats) {
        model.blackBoxes.put(pipeline + "/" + stats.getNf(), stats);
        return this;
    }

    public synchronized TestAgent load(double v) {
        model.load = v;
        return this;
    }

    /**
     * Flow-state memory: free bytes before any table is reserved, and the bytes one declared flow reserves (a
     * deploy whose CAPACITY does not fit is refused; GetResources reports what the running groups left).
     */
    public synchronized TestAgent flowMemory(long freeBytes, int bytesPerFlow) {
        model.flowMemoryFree = freeBytes;
        model.flowEntryBytes = bytesPerFlow;
        return this;
    }

    /** A tag some other party dispatches on this server (GetResources lists it). */
    public synchronized TestAgent tagInUse(int tag) {
        model.tagsInUse.add(tag);
        return this;
    }

    /** Flow state of a group, as ExportState answers it (next to empty tables of its other stateful elements). */
    public synchronized TestAgent state(String pipeline, String group, List<StateTable> tables) {
        model.state.set(pipeline, group, tables);
        return this;
    }

    /** The tables a group holds (empty ones of its stateful elements left out). */
    public synchronized List<StateTable> state(String pipeline, String group) {
        return model.state.held(pipeline, group);
    }

    public synchronized Map<String, DeployPipelineRequest> pipelines() {
        return new LinkedHashMap<>(model.pipelines);
    }

    /** The NIC rules as the agent holds them (an eth_dst's mask made explicit, an address's IP version set). */
    public synchronized Map<Long, NicRule> nicRules() {
        return new LinkedHashMap<>(model.nicRules);
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
            Set<Integer> tags = new TreeSet<>(model.tagsInUse);
            Map<Integer, String> owner = new TreeMap<>();
            model.pipelines.values().forEach(p -> p.getGroupsList().forEach(g -> {
                tags.add(g.getTag().getValue());
                owner.putIfAbsent(g.getCore(), p.getPipelineId());
            }));
            ServerResources.Builder b = ServerResources.newBuilder().setHostname(target).addAllNics(model.nics)
                    .addAllTagsInUse(tags)
                    .setFlowMemoryFreeBytes(model.flowMemoryFree - model.reserved(model.pipelines.values()))
                    .setFlowEntryBytes(model.flowEntryBytes);
            model.workers().forEach(c -> b.addCores(Core.newBuilder().setId(c).setAvailable(true)
                    .setPipelineId(owner.getOrDefault(c, ""))));
            return b.build();
        });
    }

    @Override
    public CompletableFuture<HealthReply> health() {
        return call("Health", () -> HealthReply.newBuilder().setServing(true).setBootId(model.bootId).build());
    }

    /** The steps an agent's UpdatePipeline reports (engine_backend.cc's StepClock laps), timed at 0 here. */
    private static final List<String> UPDATE_STEPS = List.of("wait", "build", "copy", "take-over", "adopt+steer",
            "retire");
    @Override
    public CompletableFuture<PipelineStatus> deployPipeline(DeployPipelineRequest request) {
        return call("DeployPipeline", () -> {
            if (failDeploy) {
                throw new Refused(Code.INVALID_ARGUMENT, "group g0: line 1:1: unknown element");
            }
            AgentRefusals.checkDeploy(request, model.nicNames(), model.workers());
            model.admit("DeployPipeline", request.getPipelineId(), request.getOwnerToken());
            if (model.pipelines.containsKey(request.getPipelineId())) {
                throw new Refused(Code.ALREADY_EXISTS, "pipeline_id: '" + request.getPipelineId()
                        + "' already deployed");
            }
            model.checkTagsFree(request.getPipelineId(), request.getIngressNic(), request.getGroupsList());
            model.checkFlowMemory(request);
            FakeBlackBoxes.start(request.getGroupsList(), model.hugepages);
            model.pipelines.put(request.getPipelineId(), request);
            model.generations.put(request.getPipelineId(), 1L);
            return model.status(request.getPipelineId());
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
            model.admit("UpdatePipeline", id, request.getOwnerToken());
            DeployPipelineRequest cur = model.pipelines.get(id);
            if (cur == null) {
                throw new Refused(Code.NOT_FOUND, "pipeline_id: no pipeline '" + id + "'");
            }
            AgentRefusals.checkUpdate(request.getGroupsList(), request.getEgressList(), model.nicNames(),
                    model.workers(), cur.getGroupsList());
            model.checkTagsFree(id, cur.getIngressNic(), request.getGroupsList());
            List<GroupSpec> built = request.getGroupsList().stream()
                    .filter(g -> g.getStateFromCount() > 0 || cur.getGroupsList().stream()
                            .noneMatch(o -> o.getGroupId().equals(g.getGroupId()) && FakeFlowTables.sameRuntime(o, g)))
                    .collect(Collectors.toList());
            // new groups are built while the old ones still run
            model.checkFlowMemory(DeployPipelineRequest.newBuilder().addAllGroups(built).build());
            FakeBlackBoxes.start(built, model.hugepages);
            DeployPipelineRequest.Builder next = cur.toBuilder().clearGroups().addAllGroups(request.getGroupsList());
            if (request.getEgressCount() > 0) {
                next.clearEgress().addAllEgress(request.getEgressList());
            }
            model.state.update(id, cur.getGroupsList(), request.getGroupsList());
            model.pipelines.put(id, next.build());
            model.generations.merge(id, 1L, Long::sum);
            PipelineStatus.Builder s = model.status(id).toBuilder();
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
            model.admit("RemovePipeline", pipelineId, request.getOwnerToken());
            if (model.pipelines.remove(pipelineId) == null) {
                throw new Refused(Code.NOT_FOUND, "pipeline_id: no pipeline '" + pipelineId + "'");
            }
            model.generations.remove(pipelineId);
            model.state.removePipeline(pipelineId);
            return null;
        });
    }

    @Override
    public CompletableFuture<ListPipelinesReply> listPipelines() {
        return call("ListPipelines", () -> ListPipelinesReply.newBuilder()
                .addAllPipelines(model.pipelines.keySet().stream().map(model::status).collect(Collectors.toList()))
                .build());
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
            model.admit("InstallNicRules", batch.getPipelineId(), batch.getOwnerToken());
            Map<Long, NicRule> next = new TreeMap<>(Long::compareUnsigned);
            next.putAll(model.nicRules);
            for (int i = 0; i < batch.getRulesCount(); i++) {
                NicRule r = AgentRefusals.nicRule(batch.getRules(i), "rules[" + i + "]", model.ruleTables(),
                        model.workers());
                if (next.putIfAbsent(r.getId(), r) != null) {
                    throw new Refused(Code.ALREADY_EXISTS, "rules[" + i + "].id: " + r.getId() + " is already "
                            + (model.nicRules.containsKey(r.getId()) ? "installed" : "in this batch"));
                }
            }
            for (Nic n : model.nics) {
                long held = next.values().stream().filter(r -> r.getNic().equals(n.getName())).count();
                if (held > n.getMaxNicRules()) {
                    throw new Refused(Code.RESOURCE_EXHAUSTED, "NIC " + n.getName() + ": " + held
                            + " rules requested, its table holds " + n.getMaxNicRules());
                }
            }
            model.nicRules.clear();
            model.nicRules.putAll(next);
            return NicRuleReply.newBuilder().setApplied(batch.getRulesCount()).build();
        });
    }

    @Override
    public CompletableFuture<NicRuleReply> removeNicRules(NicRuleIds request) {
        List<Long> ids = request.getIdsList();
        return call("RemoveNicRules", () -> {
            if (ids.isEmpty()) {
                throw new Refused(Code.INVALID_ARGUMENT, "ids: empty");
            }
            if (new HashSet<>(ids).size() < ids.size()) {
                throw new Refused(Code.INVALID_ARGUMENT, "ids: an id is listed twice");
            }
            model.admit("RemoveNicRules", request.getPipelineId(), request.getOwnerToken());
            int i = 0;
            for (Long id : ids) { // the agent removes nothing when one id is unknown
                if (!model.nicRules.containsKey(id)) {
                    throw new Refused(Code.NOT_FOUND, "ids[" + i + "]: " + id + " is not an installed NIC rule");
                }
                i++;
            }
            ids.forEach(model.nicRules::remove);
            return NicRuleReply.newBuilder().setApplied(ids.size()).build();
        });
    }

    /** Rules of one NIC or all, ordered as the agent lists them: by NIC, then priority, then id. */
    @Override
    public CompletableFuture<NicRuleList> listNicRules(String nic) {
        return call("ListNicRules", () -> {
            if (!nic.isEmpty() && !model.ruleTables().contains(nic)) {
                throw new Refused(Code.NOT_FOUND, "nic: \"" + nic + "\" is not a NIC with a rule table");
            }
            return NicRuleList.newBuilder().addAllRules(model.nicRules.values().stream()
                    .filter(r -> nic.isEmpty() || r.getNic().equals(nic))
                    .sorted(Comparator.comparing(NicRule::getNic).thenComparingInt(NicRule::getPriority))
                    .collect(Collectors.toList())).build();
        });
    }

    @Override
    public CompletableFuture<Stats> getStats(String pipelineId) {
        return call("GetStats", () -> model.stats(pipelineId));
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
                return model.stats("");
            }
        }, onReport, e -> onError.accept(e instanceof Refused
                ? new AgentException(target, "StreamLoad", ((Refused) e).code, e.getMessage(), null) : e));
    }
    @Override
    public CompletableFuture<StateSnapshot> exportState(String pipelineId, String groupId) {
        return call("ExportState", () -> {
            if (pipelineId.isEmpty() || groupId.isEmpty()) {
                throw new Refused(Code.INVALID_ARGUMENT, "pipeline_id/group_id: empty");
            }
            GroupSpec g = model.group(pipelineId, groupId, "group_id");
            return StateSnapshot.newBuilder().setPipelineId(pipelineId).setGroupId(groupId)
                    .addAllTables(model.state.get(pipelineId, g)).build();
        });
    }

    @Override
    public CompletableFuture<ImportStateReply> importState(ImportStateRequest request) {
        return call("ImportState", () -> {
            AgentRefusals.checkImport(request);
            model.admit("ImportState", request.getSnapshot().getPipelineId(), request.getOwnerToken());
            StateSnapshot snap = request.getSnapshot();
            String target = request.getTargetGroupId().isEmpty() ? snap.getGroupId() : request.getTargetGroupId();
            GroupSpec g = model.group(snap.getPipelineId(), target, "target_group_id");
            if (request.getFollowSource()) { // the agent's rule: a group follows another one of its pipeline and core
                GroupSpec src = model.pipelines.get(snap.getPipelineId()).getGroupsList().stream()
                        .filter(x -> x.getGroupId().equals(snap.getGroupId())).findFirst().orElse(null);
                if (src == null || src.getGroupId().equals(g.getGroupId()) || src.getCore() != g.getCore()) {
                    throw new Refused(Code.FAILED_PRECONDITION, "follow_source: " + snap.getGroupId()
                            + " is no other group of pipeline " + snap.getPipelineId() + " on the core of " + target);
                }
            }
            imports.add(request);
            long n = model.state.importInto(snap.getPipelineId(), g, snap.getTablesList(), request.getMerge());
            return ImportStateReply.newBuilder().setEntries(n).build();
        });
    }

    @Override
    public void close() {
    }
}
