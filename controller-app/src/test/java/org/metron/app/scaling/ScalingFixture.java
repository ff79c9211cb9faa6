package org.metron.app.scaling;

import org.junit.After;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupStatus;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.ChainState;
import org.metron.app.api.Tag;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.RuleRetagger;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.NaptFlows;
import org.metron.app.testing.RealAgent;
import org.metron.app.testing.TestServers;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.metron.app.scaling.ScalingChains.compiled;

/**
 * What the single-server scaling tests stand on: a real metron-agent (three worker cores, real gRPC, real
 * UpdatePipeline with state cloning) started once per test class, the ONOS-style switch stand-in, and a
 * {@link Rig} per chain deployed on that agent; after each test every chain is removed and the agent and the
 * switches must hold nothing of it.
 */
public abstract class ScalingFixture {
    static RealAgent agent;
    private static String nic;

    final List<Rig> rigs = new ArrayList<>();

    @BeforeClass
    public static void startAgent() throws Exception {
        agent = RealAgent.startWorkers("scaling", 3);
        nic = agent.client().getResources().get(10, TimeUnit.SECONDS).getNics(0).getName();
    }

    @AfterClass
    public static void stopAgent() throws Exception {
        if (agent != null) {
            agent.close();
        }
    }

    final class Rig extends ChainRig {
        final TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:real"),
                agent.client(), Map.of(nic, ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10"))));
        final Synthesis synthesis = (spec, profile) -> compiled(spec.name(), profile);
        final ChainManager manager;

        Rig(String name) {
            this(name, false);
        }

        Rig(String name, boolean autoScale) {
            this(name, autoScale, "mac");
        }

        /** The rig's one controller instance: its chain manager and scaling executors share its term. */
        final SingleInstanceLeadership leadership = new SingleInstanceLeadership();

        Rig(String name, boolean autoScale, String tagType) {
            super(name);
            Duration t = Duration.ofSeconds(10);
            manager = new ChainManager(store, servers, switches, leadership,
                    new PlacementEngine(servers, Fixtures.network(0), switches, new Random(1), t),
                    new RulePlanner(Fixtures.APP, Fixtures.network(0)), new Deployer(switches, t), t, synthesis);
            String json = Fixtures.chainJson(name, tagType, 1, 1);
            if (autoScale) {
                json = json.replace("\"nics\": 1}", "\"nics\": 1, \"autoScale\": true}");
                assertTrue(json, json.contains("autoScale"));
            }
            assertEquals(ChainState.ACTIVE, manager.submit(json).state());
            rigs.add(this);
        }

        ScalingExecutor executor() {
            return new ScalingExecutor(store, scaling, servers, crashing, manager, manager, Fixtures.APP,
                    Duration.ofSeconds(10), System::currentTimeMillis, null, new Random(), leadership);
        }

        List<GroupStatus> agentGroups() throws Exception {
            return agent.client().listPipelines().get(10, TimeUnit.SECONDS).getPipelinesList().stream()
                    .filter(p -> p.getPipelineId().equals(chain.name())).flatMap(p -> p.getGroupsList().stream())
                    .collect(Collectors.toList());
        }

        /** dst MAC each offload rule that sends a class to the server writes, by class. */
        Map<Integer, MacAddress> offloadTags() {
            Map<Integer, MacAddress> out = new java.util.TreeMap<>();
            for (FlowRule r : switches.rules(Fixtures.D1)) {
                for (Instruction i : r.treatment().allInstructions()) {
                    if (i instanceof ModEtherInstruction) {
                        MacAddress m = ((ModEtherInstruction) i).mac();
                        out.put((int) (m.toLong() & 0xffff), m);
                    }
                }
            }
            return out;
        }

        long transitRulesFor(Tag t) {
            return switches.rules(Fixtures.D2).stream().filter(r -> RuleRetagger.matchesGroup(r, t)).count();
        }

        void importFlow(String group, int srcPort, int mappedPort, boolean merge) throws Exception {
            agent.client().importState(ImportStateRequest.newBuilder().setSnapshot(StateSnapshot.newBuilder()
                    .setPipelineId(chain.name()).setGroupId(group).addTables(StateTable.newBuilder().setElement("rw")
                            .setKind("SynthRewriter").addEntries(NaptFlows.flow(srcPort, mappedPort)))).setMerge(merge).build())
                    .get(10, TimeUnit.SECONDS);
        }

        /** NAPT mappings of a group: source port → translated source port. */
        Map<Integer, Integer> flows(String group) throws Exception {
            Map<Integer, Integer> out = new java.util.TreeMap<>();
            for (StateTable t : agent.client().exportState(chain.name(), group).get(10, TimeUnit.SECONDS)
                    .getTablesList()) {
                for (FlowEntry e : t.getEntriesList()) {
                    if (e.getKey().getSrcIp().equals(NaptFlows.ip(10, 0, 0, 1))) {
                        out.put(e.getKey().getSrcPort(), e.getMapped().getSrcPort());
                    }
                }
            }
            return out;
        }
    }

    @After
    public void removeChains() throws Exception {
        for (Rig r : rigs) {
            if (r.manager.chain(r.chain).isPresent()) {
                r.manager.remove(r.chain);
            }
            assertTrue(r.agentGroups().isEmpty());
            assertEquals("every rule the chain ever installed is gone", 0, r.switches.total());
        }
    }
}
