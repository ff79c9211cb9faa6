package org.metron.app.testing;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.ClassStats;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.FlowStateStats;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.PortStats;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.Stats;
import org.metron.app.testing.AgentRefusals.Refused;
import org.metron.drivers.agent.AgentException.Code;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * What a {@link TestAgent} models of an agent: the NICs and worker cores it offers, the pipelines it runs with
 * their generations and owner tokens, its NIC rules, flow tables, flow memory and load; and the rules the real
 * agent checks against that state (owner-token fencing, tags unique per ingress NIC, flow memory for declared
 * capacities), with the answers read from it (a pipeline's status, GetStats). Not thread-safe: the TestAgent that
 * owns it holds its own lock around every use.
 */
final class AgentModel {
    final int cores;
    final List<Nic> nics = new ArrayList<>();
    final Set<Integer> tagsInUse = new HashSet<>();
    final Map<String, DeployPipelineRequest> pipelines = new TreeMap<>();
    final Map<String, Long> generations = new TreeMap<>();
    /** The newest owner token seen per pipeline id (agent.proto, owner_token): kept after a removal. */
    final Map<String, Long> ownerTokens = new TreeMap<>();
    final Map<Long, NicRule> nicRules = new TreeMap<>(Long::compareUnsigned);
    final FakeFlowTables state = new FakeFlowTables();
    double load;
    long flowMemoryFree;
    int flowEntryBytes;
    long bootId = 1;
    /** Whether the agent runs on hugepages (a RING black box needs them; the contract's real agent has none). */
    boolean hugepages = true;
    /** Black-box stats a test set, by "pipeline/nf" (else RUNNING, no traffic: FakeBlackBoxes.stats). */
    final Map<String, BlackBoxStats> blackBoxes = new HashMap<>();

    AgentModel(int cores, double load) {
        this.cores = cores;
        this.load = load;
    }

    /** The process restarted: every pipeline, owner token, NIC rule and flow is gone; a new boot id. */
    void restart() {
        pipelines.clear();
        generations.clear();
        ownerTokens.clear();
        nicRules.clear();
        state.clear();
        bootId++;
    }

    List<Integer> workers() {
        return IntStream.range(0, cores).boxed().collect(Collectors.toList());
    }

    Set<String> nicNames() {
        return nics.stream().map(Nic::getName).collect(Collectors.toSet());
    }

    Set<String> ruleTables() {
        return nics.stream().filter(n -> n.getMaxNicRules() > 0).map(Nic::getName).collect(Collectors.toSet());
    }

    /**
     * The agent's fencing rule (control/owner_tokens.h): a token older than the newest seen for the pipeline is
     * ABORTED naming both; a newer one becomes the newest; 0 and an unnamed pipeline (NIC rules of tools) are
     * unfenced. Pipelines and NIC rules of a chain share its tokens.
     */
    void admit(String rpc, String pipeline, long token) {
        if (token == 0 || pipeline.isEmpty()) {
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

    PipelineStatus status(String id) {
        PipelineStatus.Builder s = PipelineStatus.newBuilder().setPipelineId(id)
                .setState(PipelineState.PIPELINE_RUNNING).setGeneration(generations.get(id))
                .setOwnerToken(ownerTokens.getOrDefault(id, 0L));
        pipelines.get(id).getGroupsList().forEach(g -> s.addGroups(GroupStatus.newBuilder()
                .setGroupId(g.getGroupId()).setTag(g.getTag()).setCore(g.getCore())
                .addAllClassIds(g.getClassIdsList()).setPortShare(g.getPortShare())));
        return s.build();
    }

    /** A tag of {@code groups} another pipeline entering at the same NIC already has: ALREADY_EXISTS. */
    void checkTagsFree(String id, String ingress, List<GroupSpec> groups) {
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
    long reserved(Collection<DeployPipelineRequest> ps) {
        return ps.stream().flatMap(p -> p.getGroupsList().stream())
                .mapToLong(g -> AgentRefusals.declaredFlows(g.getClickConfig()) * flowEntryBytes).sum();
    }

    /** New groups whose declared tables do not fit in the flow memory left: RESOURCE_EXHAUSTED. */
    void checkFlowMemory(DeployPipelineRequest adding) {
        long want = reserved(List.of(adding));
        long free = flowMemoryFree - reserved(pipelines.values());
        if (want > free) {
            throw new Refused(Code.RESOURCE_EXHAUSTED, "click_config: declared capacities need " + want
                    + " bytes of flow memory, " + free + " available");
        }
    }

    /** Every worker core at the configured load, the groups of one pipeline ("" = all) with no traffic yet. */
    Stats stats(String pipelineId) {
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

    GroupSpec group(String pipeline, String group, String field) {
        DeployPipelineRequest p = pipelines.get(pipeline);
        if (p == null) {
            throw new Refused(Code.NOT_FOUND, field.replace("group_id", "pipeline_id") + ": no pipeline '"
                    + pipeline + "'");
        }
        Optional<GroupSpec> g = p.getGroupsList().stream().filter(s -> s.getGroupId().equals(group)).findFirst();
        return g.orElseThrow(() -> new Refused(Code.NOT_FOUND, field + ": no group '" + group + "' in pipeline '"
                + pipeline + "'"));
    }
}
