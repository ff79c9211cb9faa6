package org.metron.app.testing;

import org.junit.After;
import org.junit.Before;
import org.metron.agent.v1.Core;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.NicAction;
import org.metron.agent.v1.NicMatch;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.PortShare;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.Tag;
import org.metron.agent.v1.TagType;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.drivers.agent.AgentClient;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.Assert.assertTrue;
import static org.metron.app.testing.ContractCalls.ok;
import static org.metron.app.testing.NaptFlows.flow;

/**
 * What {@link AgentContract}'s cases stand on: the agent under test behind the controller's client interface, the
 * worker cores and the rule-table NIC it reports, an empty agent before and after every case, and request
 * builders.
 */
public abstract class AgentContractFixture {
    /** A NAPT group: one stateful element, "rw", of kind SynthRewriter. */
    protected static final String NAPT = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN "
            + "10.9.9.9 1024-65535 - -) -> Unstrip(14) -> [0]output;";
    protected static final String PASS = "input -> [0]output;";

    /** The agent under test, as the controller's client for it. */
    protected abstract AgentClient agent();

    /** Makes the agent unreachable (its process gone): every call fails UNAVAILABLE until {@link #restart()}. */
    protected abstract void stop() throws Exception;

    /** Starts the agent again at the same address, with nothing deployed; returns once it answers. */
    protected abstract void restart() throws Exception;

    protected List<Integer> workers;
    protected String nic;

    @Before
    public void discover() throws Exception {
        ServerResources res = ok(agent().getResources());
        workers = res.getCoresList().stream().map(Core::getId).collect(Collectors.toList());
        nic = res.getNicsList().stream().filter(n -> n.getMaxNicRules() > 0).map(Nic::getName).findFirst()
                .orElseThrow(() -> new AssertionError("no NIC with a rule table: " + res));
        assertTrue("two worker cores needed: " + workers, workers.size() >= 2);
    }

    /** Leaves the agent empty for the next case, with the calls under test (so a broken removal shows here too). */
    @After
    public void empty() throws Exception {
        for (PipelineStatus p : ok(agent().listPipelines()).getPipelinesList()) {
            ok(agent().removePipeline(p.getPipelineId()));
        }
        List<Long> ids = ok(agent().listNicRules("")).getRulesList().stream().map(NicRule::getId)
                .collect(Collectors.toList());
        if (!ids.isEmpty()) {
            ok(agent().removeNicRules(ids));
        }
    }

    // ---- helpers --------------------------------------------------------------------------------------------

    /** A group under MAC tag {@code tag} holding traffic class {@code tag}. */
    protected GroupSpec group(String id, int tag, int core, String click) {
        return GroupSpec.newBuilder().setGroupId(id).setClickConfig(click)
                .setTag(Tag.newBuilder().setType(TagType.TAG_MAC).setValue(tag)).setCore(core)
                .addClassIds(tag).build();
    }

    protected DeployPipelineRequest pipeline(String id, GroupSpec... groups) {
        return DeployPipelineRequest.newBuilder().setPipelineId(id).setIngressNic(nic)
                .addEgress(Egress.newBuilder().setNic(nic)).addAllGroups(List.of(groups)).build();
    }

    protected PipelineStatus deploy(String id, GroupSpec... groups) throws Exception {
        return ok(agent().deployPipeline(pipeline(id, groups)));
    }

    protected UpdatePipelineRequest update(String id, GroupSpec... groups) {
        return UpdatePipelineRequest.newBuilder().setPipelineId(id).addAllGroups(List.of(groups)).build();
    }

    /** "pipeline/group tag core" of every group running. */
    protected Set<String> running() throws Exception {
        return ok(agent().listPipelines()).getPipelinesList().stream().flatMap(p -> p.getGroupsList().stream()
                .map(g -> p.getPipelineId() + "/" + g.getGroupId() + " tag " + g.getTag().getValue() + " core "
                        + g.getCore())).collect(Collectors.toSet());
    }

    /** Source port -> mapped source port of every flow a group's tables hold. */
    protected java.util.Map<Integer, Integer> flows(String pipeline, String group) throws Exception {
        java.util.Map<Integer, Integer> out = new java.util.TreeMap<>();
        for (StateTable t : ok(agent().exportState(pipeline, group)).getTablesList()) {
            t.getEntriesList().forEach(e -> out.put(e.getKey().getSrcPort(), e.getMapped().getSrcPort()));
        }
        return out;
    }

    protected NicRule rule(long id, int tag, int core) {
        return NicRule.newBuilder().setId(id).setNic(nic).setPriority(1)
                .setMatch(NicMatch.newBuilder().setEthDst(String.format("02:4d:00:%02x:00:00", tag))
                        .setEthDstMask("ff:ff:ff:ff:00:00"))
                .setAction(NicAction.newBuilder().setQueue(core)).build();
    }

    protected Set<Long> ruleIds() throws Exception {
        return ok(agent().listNicRules("")).getRulesList().stream().map(NicRule::getId).collect(Collectors.toSet());
    }

    protected static PortShare share(int index, int count) {
        return PortShare.newBuilder().setIndex(index).setCount(count).build();
    }

    /** A NAPT group whose table declares {@code capacity} flows per core. */
    protected static String napt(long capacity) {
        return NAPT.replace("- -)", "- -, CAPACITY " + capacity + ")");
    }
}
